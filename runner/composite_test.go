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
	_, okT := doc.Summary["totals.get"]
	_, okA := doc.Summary["achievements.get"]
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
	// each composite holds the 40 ms wait and at least three 2 ms store
	// calls (the post's and the two reads'); the exact timing from the
	// post's intended start is the load package's test
	if *client.MeanMs < 46 || client.P50Ms == nil || *client.P50Ms < 46 {
		t.Fatalf("activity.client mean %.2f ms (p50 %v), post %.2f ms: want the post, the 40 ms wait and the reads", *client.MeanMs, client.P50Ms, *post.MeanMs)
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
