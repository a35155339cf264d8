package runner

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/load"
	"github.com/scalelab/scalelab/results"
)

// TestThreadsPlan: --ramp-up or --loops choose the threads model; the run
// is bounded by its loops alone (no default duration, no study --ops
// budget), loops default to 1 or, with --duration, to "until the end";
// flags of other models are refused.
func TestThreadsPlan(t *testing.T) {
	t.Parallel()
	plan := func(o *Options) (*Plan, error) {
		o.Out = filepath.Join(t.TempDir(), "never")
		return NewPlan(o)
	}
	p, err := plan(&Options{Scenario: "social", Engine: "null", Users: 200, RampUp: 25 * time.Second, Loops: 100,
		Given: map[string]bool{"users": true, "ramp-up": true, "loops": true}})
	if err != nil {
		t.Fatal(err)
	}
	th, ok := p.model.(*load.Threads)
	if !ok || th.Users != 200 || th.RampUp != 25*time.Second || th.Loops != 100 {
		t.Fatalf("model %#v, want threads with 200 users, 25s ramp-up, 100 loops", p.model)
	}
	if p.opts.Duration != 0 || p.opts.Ops != 0 {
		t.Errorf("duration %s ops %d: the loops alone bound the run", p.opts.Duration, p.opts.Ops)
	}
	p, err = plan(&Options{Scenario: "ycsb", Engine: "null", Model: "threads", Duration: 5 * time.Second, Given: map[string]bool{}})
	if err != nil {
		t.Fatal(err)
	}
	if th := p.model.(*load.Threads); th.Loops != 0 || th.Users != 8 {
		t.Errorf("--model threads --duration 5s: users %d loops %d, want 8 users looping until the end", th.Users, th.Loops)
	}
	p, err = plan(&Options{Scenario: "ycsb", Engine: "null", RampUp: time.Second, Given: map[string]bool{"ramp-up": true}})
	if err != nil {
		t.Fatal(err)
	}
	if th := p.model.(*load.Threads); th.Loops != 1 {
		t.Errorf("--ramp-up alone: %d loops, want JMeter's default 1", th.Loops)
	}
	for _, tc := range []struct {
		o    *Options
		want string
	}{
		{&Options{Scenario: "ycsb", Engine: "null", Rate: "10/s", Loops: 5, Given: map[string]bool{"rate": true, "loops": true}}, "--loops does not apply to the rate model"},
		{&Options{Scenario: "ycsb", Engine: "null", Model: "closed", RampUp: time.Second, Given: map[string]bool{"ramp-up": true}}, "--ramp-up does not apply to the closed model"},
		{&Options{Scenario: "ycsb", Engine: "null", Loops: -1, Given: map[string]bool{"loops": true}}, "--loops -1"},
		{&Options{Scenario: "ycsb", Engine: "null", RampUp: -time.Second, Given: map[string]bool{"ramp-up": true}}, "--ramp-up -1s"},
	} {
		_, err := plan(tc.o)
		if results.ExitCode(err) != results.ExitUsage || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v (exit %d), want exit 2 naming %q", tc.o, err, results.ExitCode(err), tc.want)
		}
	}
}

// TestThreadsRunJSON: a thread-group run records its model, its operations
// in flight (run.json's concurrency, concurrency.csv) and runs exactly
// users x loops operations.
func TestThreadsRunJSON(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	p, err := NewPlan(&Options{Scenario: "ycsb", Engine: "null", Users: 6, RampUp: 200 * time.Millisecond, Loops: 25, Seed: 1,
		Sets: []string{"ycsb.records=100"}, Given: map[string]bool{"users": true, "ramp-up": true, "loops": true}, Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := p.Execute(context.Background(), Quiet{}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Load.Model != load.ModelThreads || doc.Totals.Count != 150 || doc.StopReason != "completed" {
		t.Errorf("model %s, %d operations, stop %q; want threads, 6 x 25 = 150, completed", doc.Load.Model, doc.Totals.Count, doc.StopReason)
	}
	c := doc.Concurrency
	if c == nil || c.Users != 6 || c.MaxInFlight < 1 || c.MaxInFlight > 6 || doc.MaxSessions < 1 || doc.MaxSessions > 6 {
		t.Errorf("concurrency %+v, max users active %d; want 1..6 in flight and active", c, doc.MaxSessions)
	}
	again, err := results.Read(dir)
	if err != nil || again.Concurrency == nil || !contains(again.Files, results.ConcurrencyFile) {
		t.Errorf("run.json read back: %v, files %v", err, again.Files)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
