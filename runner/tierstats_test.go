package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/telemetry"
)

// fakeServer stands for a tier's server: its counter "fake.ops" counts the
// operations the workload sent it, as a cache counts hits and misses.
type fakeServer struct {
	ops      atomic.Int64
	calls    atomic.Int64       // SampleStats calls
	cancelAt int64              // the operation at which Do cancels the run (0: never)
	cancel   context.CancelFunc // the run's
}

// fakeStatsConn is a tier connection whose server reports its stats.
type fakeStatsConn struct {
	srv       *fakeServer
	failFirst bool // the first sample fails, as a busy server's may
}

var _ engine.StatsSampler = fakeStatsConn{}

func (c fakeStatsConn) Info(context.Context) (engine.Info, error) { return engine.Info{}, nil }
func (c fakeStatsConn) Close() error                              { return nil }

// SampleStats fails with a context that has ended, as a real server's
// round trip does.
func (c fakeStatsConn) SampleStats(ctx context.Context) (map[string]float64, error) {
	n := c.srv.calls.Add(1)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sample fake stats: %w", err)
	}
	if c.failFirst && n == 1 {
		return nil, errors.New("sample fake stats: server busy")
	}
	return map[string]float64{"fake.ops": float64(c.srv.ops.Load()), "fake.used_memory": 1000 * float64(n)}, nil
}

// statsWorkload sends every operation to its server.
type statsWorkload struct {
	nothingToLoad
	srv *fakeServer
}

func (w statsWorkload) Operations() []string                       { return []string{"op"} }
func (w statsWorkload) NewSession(uint64, uint64) scenario.Session { return statsSession{w.srv} }

type statsSession struct{ srv *fakeServer }

func (s statsSession) Next() (int, bool) { return 0, true }
func (s statsSession) Do(context.Context) error {
	if n := s.srv.ops.Add(1); n == s.srv.cancelAt {
		s.srv.cancel() // Ctrl-C during the load
	}
	return nil
}

// TestTierStatsAroundLoad: the runner samples a tier's server stats right
// before the load and right after it, also when the run is interrupted,
// and records both with their difference in the tier's run.json entry;
// a failed sample is a warning, not a failed run; the store's stats and
// tiers without stats get none.
func TestTierStatsAroundLoad(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		opts       Options
		cancelAt   int64
		failFirst  bool
		wantStatus string
	}{
		{name: "ops budget", opts: Options{Ops: 3000}, wantStatus: results.StatusOK},
		{name: "interrupted", opts: Options{Duration: time.Minute}, cancelAt: 500, wantStatus: results.StatusInterrupted},
		{name: "before fails", opts: Options{Ops: 1000}, failFirst: true, wantStatus: results.StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := c.opts
			o.Scenario, o.Engine, o.Seed, o.Telemetry = "audittest", "null", 1, -1
			o.Users, o.Given = 2, map[string]bool{"users": true}
			o.Out = filepath.Join(t.TempDir(), "run")
			p, err := NewPlan(&o)
			if err != nil {
				t.Fatal(err)
			}
			if err := results.Create(p.dir); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			srv, store := &fakeServer{cancelAt: c.cancelAt, cancel: cancel}, &fakeServer{}
			doc := &results.Run{Summary: map[string]metrics.OpSummary{},
				Tiers: []results.Tier{{Role: scenario.RoleCache, Engine: "fake"}, {Role: scenario.RoleApp, Engine: "app"}}}
			st := &runState{doc: doc, path: filepath.Join(p.dir, results.RunFile)}
			sources := []telemetry.Source{
				{Tier: scenario.RoleStore, Sampler: fakeStatsConn{srv: store}},
				{Tier: scenario.RoleCache, Sampler: fakeStatsConn{srv: srv, failFirst: c.failFirst}},
			}
			status, err := p.measure(ctx, statsWorkload{srv: srv}, st, Quiet{}, sources)
			if err != nil || status != c.wantStatus {
				t.Fatalf("measure: status %q, error %v; want %q", status, err, c.wantStatus)
			}
			sent := srv.ops.Load()
			if sent == 0 || doc.Totals.Started != sent {
				t.Fatalf("the workload sent %d operations, run.json started %d", sent, doc.Totals.Started)
			}
			if c.cancelAt > 0 && sent < c.cancelAt {
				t.Fatalf("the run stopped after %d operations, before its interruption at %d", sent, c.cancelAt)
			}
			if n := srv.calls.Load(); n != 2 {
				t.Errorf("the tier was sampled %d times, want 2 (before and after the load)", n)
			}
			if n := store.calls.Load(); n != 0 {
				t.Errorf("the store was sampled %d times for the tiers' stats", n)
			}
			if doc.LoadStart == nil {
				t.Error("run.json has no load_start")
			}
			ts := doc.Tiers[0].Stats
			if ts == nil {
				t.Fatalf("the cache tier has no stats; warnings %q", doc.Warnings)
			}
			if doc.Tiers[1].Stats != nil {
				t.Errorf("the app tier got stats %+v", doc.Tiers[1].Stats)
			}
			if got := ts.After["fake.ops"]; got != float64(sent) {
				t.Errorf("after the load the server counted %v operations, want %d (sampled before the load ended?)", got, sent)
			}
			if c.failFirst {
				if ts.Before != nil || ts.Delta != nil {
					t.Errorf("a failed sample before the load: before %v, delta %v, want none", ts.Before, ts.Delta)
				}
				if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "cache tier: server stats before the load unavailable: sample fake stats: server busy") {
					t.Errorf("warnings %q", doc.Warnings)
				}
				return
			}
			if len(doc.Warnings) != 0 {
				t.Errorf("warnings %q", doc.Warnings)
			}
			if got, ok := ts.Before["fake.ops"]; !ok || got != 0 {
				t.Errorf("before the load the server had counted %v operations (present %t), want 0", got, ok)
			}
			if ts.Delta["fake.ops"] != float64(sent) || ts.Delta["fake.used_memory"] != 1000 {
				t.Errorf("delta %v, want fake.ops %d and fake.used_memory 1000", ts.Delta, sent)
			}
		})
	}
}
