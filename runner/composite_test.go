package runner

import (
	"strings"
	"testing"
)

// TestMhealthClientComposite: mhealth's activity.client is the post, the
// client's wait after it and the two reads, timed from the post's start;
// run.json marks it composite and leaves it out of the totals.
func TestMhealthClientComposite(t *testing.T) {
	t.Parallel()
	doc, code, out := run(t, &Options{Scenario: "mhealth", Engine: "memory", Users: 2, Given: map[string]bool{"users": true}, Ops: 80,
		Sets: []string{"mhealth.patients=2", "mhealth.weeks=1", "mhealth.hours_per_week=30", "memory.latency=2ms", "mhealth.wait_after_write=40ms"}})
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	post, okP := doc.Summary["activity.post"]
	client, okC := doc.Summary["activity.client"]
	tot, okT := doc.Summary["totals.get"]
	ach, okA := doc.Summary["achievements.get"]
	if !okP || !okC || !okT || !okA || client.MeanMs == nil || post.MeanMs == nil {
		t.Fatalf("summary lacks the post, the reads or the composite: %v", doc.Summary)
	}
	if client.Composite == "" || post.Composite != "" {
		t.Fatalf("composite marks: client %q, post %q", client.Composite, post.Composite)
	}
	// every closed composite is one post followed by both reads; each
	// user's last may be left open by the ops budget
	if client.Count == 0 || client.Count > post.Count || client.Count < post.Count-2 {
		t.Fatalf("%d composites for %d posts", client.Count, post.Count)
	}
	parts := *post.MeanMs + 40 + *tot.MeanMs + *ach.MeanMs
	if *client.MeanMs < parts-0.5 || *client.MeanMs > parts+15 {
		t.Fatalf("activity.client mean %.2f ms; post %.2f + wait 40 + reads %.2f + %.2f = %.2f", *client.MeanMs, *post.MeanMs, *tot.MeanMs, *ach.MeanMs, parts)
	}
	var sum int64
	for _, s := range doc.Summary {
		if s.Composite == "" {
			sum += s.Count
		}
	}
	if doc.Totals.Count != sum {
		t.Fatalf("totals count %d, want %d (without the composite)", doc.Totals.Count, sum)
	}
	if !strings.Contains(out, "activity.client: the patient's client") {
		t.Fatalf("terminal summary does not describe the composite:\n%s", out)
	}
}
