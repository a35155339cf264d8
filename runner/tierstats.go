package runner

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/telemetry"
)

// tierStatsTimeout bounds each sample of a tier's server statistics.
const tierStatsTimeout = 5 * time.Second

// tierStats are the samples of the tiers beside the store whose
// connections report their server's statistics (engine.StatsSampler):
// taken right before the load starts (sampleTierStats) and right after it
// ends (record), both recorded in run.json's tiers with their difference.
type tierStats struct {
	tiers []tierSample
}

// tierSample is one tier's sample from before the load.
type tierSample struct {
	role    string
	sampler engine.StatsSampler
	before  map[string]float64
	err     error
}

// sampleTierStats samples every tier among sources (the store's own stats
// go to the telemetry only), in role order.
func sampleTierStats(ctx context.Context, sources []telemetry.Source) *tierStats {
	ts := &tierStats{}
	for _, s := range sources {
		if s.Tier == scenario.RoleStore || s.Sampler == nil {
			continue
		}
		ts.tiers = append(ts.tiers, tierSample{role: s.Tier, sampler: s.Sampler})
	}
	sort.Slice(ts.tiers, func(i, j int) bool { return ts.tiers[i].role < ts.tiers[j].role })
	for i := range ts.tiers {
		t := &ts.tiers[i]
		sctx, cancel := context.WithTimeout(ctx, tierStatsTimeout)
		t.before, t.err = t.sampler.SampleStats(sctx)
		cancel()
	}
	return ts
}

// record samples every tier again and writes both samples and their
// difference into the tier's entry of doc.Tiers. It samples with a
// context of its own, so that an interrupted run (Ctrl-C) still records
// the figures after its load; a failed sample is a warning, never a
// failed run.
func (ts *tierStats) record(ctx context.Context, doc *results.Run) {
	for _, t := range ts.tiers {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tierStatsTimeout)
		after, err := t.sampler.SampleStats(sctx)
		cancel()
		if t.err != nil {
			t.before = nil
			doc.Warnings = append(doc.Warnings, fmt.Sprintf("%s tier: server stats before the load unavailable: %v", t.role, t.err))
		}
		if err != nil {
			after = nil
			doc.Warnings = append(doc.Warnings, fmt.Sprintf("%s tier: server stats after the load unavailable: %v", t.role, err))
		}
		for i := range doc.Tiers {
			if doc.Tiers[i].Role == t.role {
				doc.Tiers[i].Stats = results.NewTierStats(t.before, after)
			}
		}
	}
}
