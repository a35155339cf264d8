package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/scalelab/scalelab/load"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/scenario"
)

// planSegment checks and adapts a run that is one segment of a divided
// test (--segment I/N, N > 1): data is loaded once by a separate
// --load-only run, so the segment does not load (its scenario's
// SCENARIO.load setting is set to false), and each segment must have
// users or workers and operations to run.
func planSegment(f *Options, scen scenario.Scenario) error {
	seg := f.Segment
	if !seg.Split() {
		return nil
	}
	if f.LoadOnly {
		return results.UsageErr("run: --load-only loads the data of the whole test once: run it without --segment, then run the segments (they do not load)")
	}
	key := scen.Name() + ".load"
	has := false
	for _, s := range scen.Settings() {
		has = has || s.Key == key
	}
	if has {
		for _, a := range f.Sets {
			k, v, _ := strings.Cut(a, "=")
			if strings.TrimSpace(k) == key && strings.TrimSpace(v) != "false" {
				return results.UsageErr("run: --set %s: a segment of a divided test (--segment %s) does not load data; load it once with `scalelab run %s --load-only` (no --segment), then run the segments", a, seg, scen.Name())
			}
		}
		f.Sets = append(f.Sets, key+"=false")
	}
	return nil
}

// checkSegmentShares rejects a division that leaves this segment nothing
// to do: fewer users (or rate workers) or operations than segments.
func checkSegmentShares(p *Plan) error {
	seg := p.flags.Segment
	if !seg.Split() {
		return nil
	}
	var who string
	var n int64
	switch m := p.model.(type) {
	case *load.Closed:
		who, n = "users", int64(m.Users)
	case *load.Threads:
		who, n = "users", int64(m.Users)
	case *load.Rate:
		who, n = "workers (--users of the rate model)", int64(m.Workers)
	}
	if who != "" && seg.Share(n) == 0 {
		return results.UsageErr("run: --segment %s: %d %s shared by %d segments leaves this one none; use at least %d", seg, n, who, seg.N(), seg.N())
	}
	if p.opts.Ops > 0 && seg.Share(p.opts.Ops) == 0 {
		return results.UsageErr("run: --segment %s: --ops %d shared by %d segments leaves this one none; use at least %d", seg, p.opts.Ops, seg.N(), seg.N())
	}
	return nil
}

// testHash identifies the test a run belongs to: every segment of one
// divided test computes the same hash, so that `scalelab merge` can refuse
// to add runs of different tests. Targets are left out (hosts may reach
// one store at different addresses), as are the output directory and the
// segment's index.
func (p *Plan) testHash() string {
	f := p.flags
	var startAt string
	if !f.StartAt.IsZero() {
		startAt = f.StartAt.UTC().Format(time.RFC3339Nano)
	}
	b, _ := json.Marshal(struct {
		Scenario, Engine, Model string
		Settings                map[string]string
		Params                  map[string]any
		Duration, Warmup        time.Duration
		Ops                     int64
		Seed                    uint64
		Segments                int
		StartAt                 string
		SLO, Faults             []string
	}{p.scen.Name(), p.eng.Name(), p.model.Name(), p.settings.Map(), p.model.Params(),
		p.opts.Duration, f.Warmup, p.opts.Ops, p.opts.Seed, f.Segment.N(), startAt, f.SLO, f.Faults})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// segmentDoc is run.json's "segment" of a run that is a segment of a
// divided test or starts at a set instant; nil otherwise.
func (p *Plan) segmentDoc() *results.Segment {
	f := p.flags
	if !f.Segment.Split() && f.StartAt.IsZero() {
		return nil
	}
	host, _ := os.Hostname()
	d := &results.Segment{Index: f.Segment.Index, Count: f.Segment.N(), Host: host, Clock: results.ClockFacts(), TestHash: p.testHash()}
	if !f.StartAt.IsZero() {
		t := f.StartAt.UTC()
		d.StartAt = &t
	}
	return d
}

// lateWarning is how late after --start-at a segment may start before its
// run.json carries a warning.
const lateWarning = time.Second

// waitStart waits until --start-at, showing on stderr how long, and
// records in run.json how far off the load really started. A cancelled
// ctx ends the wait.
func (p *Plan) waitStart(ctx context.Context, doc *results.Run, stderr io.Writer) error {
	at := p.flags.StartAt
	if at.IsZero() {
		return nil
	}
	if d := time.Until(at); d > 0 {
		fmt.Fprintf(stderr, "scalelab: waiting %s until --start-at %s\n", d.Round(time.Millisecond), at.UTC().Format(time.RFC3339Nano))
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return fmt.Errorf("interrupted while waiting for --start-at: %w", ctx.Err())
		}
	}
	late := time.Since(at)
	if doc.Segment != nil {
		doc.Segment.StartLateMs = float64(late.Microseconds()) / 1000
	}
	if late > lateWarning {
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("the load started %s after --start-at %s: this segment's timeline is shifted by that much against the others'", late.Round(time.Millisecond), at.UTC().Format(time.RFC3339)))
		fmt.Fprintf(stderr, "scalelab: warning: the load started %s after --start-at\n", late.Round(time.Millisecond))
	} else {
		fmt.Fprintf(stderr, "scalelab: the load started %s after --start-at\n", late.Round(time.Microsecond))
	}
	return nil
}
