package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/promsource"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/telemetry"
)

// planProm reads --telemetry-source and --observe (bad input is exit 2).
func planProm(f *Options) (*promsource.Mapping, error) {
	m, err := promsource.Plan(f.TelemetrySource, f.Observe)
	if err != nil {
		return nil, results.WithCode(results.ExitUsage, err)
	}
	if m != nil && f.Telemetry < 0 {
		return nil, results.UsageErr("run: --telemetry off and --telemetry-source %s contradict each other; drop one", m.URL)
	}
	return m, nil
}

// promScrapeWait bounds the wait, after the load, for the Prometheus
// server to scrape the run's last seconds.
const promScrapeWait = 20 * time.Second

// promClient is the run's Prometheus source, checked before the load: an
// unreachable server is a warning (the run still measures, and its tiers
// are named unobserved), never an error.
func (p *Plan) promClient(ctx context.Context, doc *results.Run) *promsource.Client {
	if p.prom == nil {
		return nil
	}
	c, err := promsource.NewClient(p.prom)
	if err == nil {
		err = c.Check(ctx)
	}
	if err != nil {
		w := fmt.Sprintf("--telemetry-source: %v; the tiers it maps are not observed", err)
		doc.Warnings = append(doc.Warnings, w)
		fmt.Fprintf(p.stderr, "warning: %s\n", w)
		return nil
	}
	return c
}

// observeExternal reads the mapped tiers' figures over the run from
// Prometheus into the sampler, and tells it which tiers of the run
// nothing observed. Called after the sampler stopped.
func (p *Plan) observeExternal(ctx context.Context, tele *telemetry.Sampler, pc *promsource.Client, start time.Time, doc *results.Run) {
	observed := map[string]bool{}
	for _, n := range p.telemetryNodes() {
		observed[n.Tier] = true
	}
	var sources []results.TelemetrySource
	if p.prom != nil {
		src := results.TelemetrySource{Kind: "prometheus", URL: p.prom.URL}
		if pc != nil {
			end := time.Now()
			pc.WaitScraped(ctx, end, promScrapeWait, func(s string) { fmt.Fprintln(p.stderr, s) })
			fmt.Fprintf(p.stderr, "reading the tiers' figures from Prometheus at %s\n", p.prom.URL)
			res := pc.Fetch(ctx, start, end, p.telemetryInterval())
			if err := tele.AddExternal(res.Nodes, res.Stats); err != nil {
				res.Warnings = append(res.Warnings, err.Error())
			}
			for t := range res.Observed {
				observed[t] = true
			}
			src = res.Source
			for _, w := range res.Warnings {
				doc.Warnings = append(doc.Warnings, "telemetry: "+w)
				fmt.Fprintf(p.stderr, "warning: %s\n", w)
			}
		} else {
			src.Warnings = []string{"unreachable before the load; nothing read"}
		}
		sources = append(sources, src)
	}
	tele.SetObserved(sources, p.unobserved(observed, doc))
}

// unobserved are the tiers the run uses that nothing observed: a store
// given by --target (not embedded), a web scenario's app at a URL, a
// tier beside the store given by its target.
func (p *Plan) unobserved(observed map[string]bool, doc *results.Run) []results.Unobserved {
	var out []results.Unobserved
	embedded := func(e engine.Engine) bool {
		em, ok := e.(engine.Embedded)
		return ok && em.Embedded()
	}
	if p.cluster == nil && !embedded(p.eng) && !observed[scenario.RoleStore] {
		at := redactTarget(p.flags.Target)
		if doc.Server != nil && doc.Server.Target != "" {
			at = doc.Server.Target
		}
		out = append(out, results.Unobserved{Tier: scenario.RoleStore, At: at})
	}
	if url := p.settings.Map()[p.scen.Name()+".app"]; p.app == nil && url != "" && !observed[scenario.RoleApp] {
		out = append(out, results.Unobserved{Tier: scenario.RoleApp, At: redactTarget(url)})
	}
	for _, t := range p.tiers {
		if t.cluster == nil && !embedded(t.eng) && !observed[t.role] {
			out = append(out, results.Unobserved{Tier: t.role, At: redactTarget(t.target)})
		}
	}
	return out
}

// noSampleWarnings are the warnings of the tiers observed without a
// sample in the measured window (a Prometheus series scraped less often
// than the run lasted): their figures are left out rather than shown as
// zeros. The generator's is not one: the saturation verdict already says
// that the run was too short to sample.
func noSampleWarnings(t *results.Telemetry) []string {
	var out []string
	for _, tier := range t.NoSamples {
		if tier == telemetry.TierGenerator {
			continue
		}
		out = append(out, fmt.Sprintf("telemetry: tier %s: no samples in the measured window (the run was shorter than its sampling or scrape interval); its CPU and memory are unknown, not zero", tier))
	}
	return out
}
