package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/segment"
)

// TestSegmentTestHash: every segment of one test has the same hash, and a
// different setting, load or segment count changes it.
func TestSegmentTestHash(t *testing.T) {
	at := time.Now().Add(time.Hour)
	plan := func(seg segment.Segment, users int, sets ...string) *Plan {
		t.Helper()
		p, err := NewPlan(&Options{Scenario: "ycsb", Engine: "null", Users: users, Given: map[string]bool{"users": true},
			Segment: seg, StartAt: at, Sets: sets})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	h0 := plan(segment.Segment{Index: 0, Count: 4}, 8).testHash()
	for i := 1; i < 4; i++ {
		if h := plan(segment.Segment{Index: i, Count: 4}, 8).testHash(); h != h0 {
			t.Errorf("segment %d/4 hash %s, segment 0/4 %s", i, h, h0)
		}
	}
	for name, p := range map[string]*Plan{
		"users":    plan(segment.Segment{Index: 0, Count: 4}, 16),
		"setting":  plan(segment.Segment{Index: 0, Count: 4}, 8, "ycsb.workload=b"),
		"segments": plan(segment.Segment{Index: 0, Count: 2}, 8),
	} {
		if p.testHash() == h0 {
			t.Errorf("another %s, the same test hash", name)
		}
	}
}

// TestSegmentPlanRules: a segment does not load, refuses to, and must have
// users and operations to run; faults are injected by segment 0 alone.
func TestSegmentPlanRules(t *testing.T) {
	p, err := NewPlan(&Options{Scenario: "ycsb", Engine: "null", Segment: segment.Segment{Index: 1, Count: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Settings().Get("ycsb.load").Bool() {
		t.Errorf("a segment's ycsb.load is true, want false")
	}
	if p.opts.Segment != (segment.Segment{Index: 1, Count: 2}) {
		t.Errorf("load options' segment %+v", p.opts.Segment)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Scenario: "ycsb", Engine: "null", Segment: segment.Segment{Index: 1, Count: 2}, Sets: []string{"ycsb.load=true"}}, "does not load data"},
		{Options{Scenario: "ycsb", Engine: "memory", Segment: segment.Segment{Index: 1, Count: 2}}, "cannot share it"},
		{Options{Scenario: "ycsb", Engine: "sqlite", Segment: segment.Segment{Index: 1, Count: 2}}, "sqlite with a --target file"},
		{Options{Scenario: "ycsb", Engine: "null", Segment: segment.Segment{Index: 1, Count: 2}, LoadOnly: true}, "without --segment"},
		{Options{Scenario: "ycsb", Engine: "null", Segment: segment.Segment{Index: 3, Count: 4}, Users: 3, Given: map[string]bool{"users": true}}, "3 users shared by 4 segments"},
		{Options{Scenario: "ycsb", Engine: "null", Segment: segment.Segment{Index: 3, Count: 4}, Ops: 3}, "--ops 3 shared by 4"},
		{Options{Scenario: "ycsb", Engine: "null", Segment: segment.Segment{Index: 3, Count: 4}, Rate: "100/s", Arrivals: "constant", Users: 2, Given: map[string]bool{"users": true, "rate": true}}, "2 workers"},
	} {
		_, err := NewPlan(&c.o)
		if results.ExitCode(err) != results.ExitUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want exit 2 saying %q", c.o, err, c.want)
		}
	}
}
