package runner

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/scalelab/scalelab/apptier"
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/scenario"
)

// resolveApp turns `--cluster APP` (an app cluster) into the run's store
// (the servers' store cluster, or their SQLite file) and the balancer's
// URL as SCENARIO.app, so that the load goes over HTTP through the
// balancer while the data load and the checks use the store directly.
func resolveApp(f *Options, scen scenario.Scenario, app *cluster.State) (*cluster.State, error) {
	served := app.Params[apptier.ParamScenario]
	if served != scen.Name() {
		return nil, results.UsageErr("--cluster %s is an app cluster serving %s, not %s; run %s against it, or start one with `scalelab cluster up app --scenario %s`", app.Name, served, scen.Name(), served, scen.Name())
	}
	storeEngine := app.Params[apptier.ParamStoreEngine]
	if f.Engine != "" && f.Engine != storeEngine {
		return nil, results.UsageErr("--cluster %s: its servers use engine %s, but --engine %s was given; drop --engine (the cluster implies it)", app.Name, storeEngine, f.Engine)
	}
	key := scen.Name() + ".app"
	for _, s := range f.Sets {
		if k, _, _ := strings.Cut(s, "="); strings.TrimSpace(k) == key {
			return nil, results.UsageErr("--set %s: --cluster %s (an app cluster) sets it to its balancer, %s", s, app.Name, app.Target)
		}
	}
	f.Sets = append(f.Sets, key+"="+app.Target)
	f.Engine = storeEngine
	// the servers' cache tier is the run's too: its server's figures
	// before and after the load go into run.json
	if name := app.Params[apptier.ParamCache]; name != "" {
		given := false
		for _, t := range f.Tiers {
			given = given || t.Role == scenario.RoleCache
		}
		if !given {
			f.Tiers = append(f.Tiers, TierOptions{Role: scenario.RoleCache, Cluster: name})
		}
	}
	if name := app.Params[apptier.ParamStore]; name != "" {
		st, err := cluster.Load(name)
		if err != nil {
			return nil, results.UsageErr("--cluster %s: its store cluster: %v", app.Name, err)
		}
		return st, nil
	}
	f.Target = app.Params[apptier.ParamStoreTarget]
	return nil, nil
}

// faultCluster is the cluster --fault acts on: the app cluster when the
// run drives one (kill:app2), else the store's, else (an embedded store
// behind a cache tier) the cache tier's, so that a cache server can be
// killed under the load.
func (p *Plan) faultCluster() *cluster.State { return faultTarget(p.app, p.cluster, p.tiers) }

// faultTarget is faultCluster of a plan's app cluster, store cluster and
// tiers, before the plan exists.
func faultTarget(app, store *cluster.State, tiers []planTier) *cluster.State {
	if app != nil {
		return app
	}
	if store != nil {
		return store
	}
	for _, t := range tiers {
		if t.cluster != nil {
			return t.cluster
		}
	}
	return nil
}

// appStats reads the balancer's counters; nil without an app cluster.
func (p *Plan) appStats(ctx context.Context) ([]apptier.ServerStats, error) {
	if p.app == nil {
		return nil, nil
	}
	return apptier.Stats(ctx, p.app.Params[apptier.ParamSocket])
}

// waitAppIdle waits, after the load, until the app servers have finished
// the run's requests (those whose client has gone too): the audit's
// read-back and the next run's data load then see every write the run's
// requests made, none landing later. The wait is bounded by the servers'
// request timeout and a margin (apptier.IdleWait) and announced after a
// few seconds; what is left then is a warning in run.json.
func (p *Plan) waitAppIdle(ctx context.Context, doc *results.Run, stderr io.Writer) {
	if p.app == nil {
		return
	}
	limit := apptier.IdleWait(p.app)
	left, err := apptier.WaitIdle(ctx, p.app, limit, func(n int64) {
		fmt.Fprintf(stderr, "waiting for the app servers to finish the run's %d requests still in flight (up to %s)\n", n, limit)
	})
	switch {
	case err != nil:
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("app servers: could not wait for the run's requests to finish: %v", err))
	case left > 0:
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("app servers: %d of the run's requests were still in flight %s after the load; their writes may land after the run", left, limit))
	}
}

// recordApp adds the app tier to run.json: its servers and settings, and
// what the balancer counted between before and now.
func (p *Plan) recordApp(ctx context.Context, doc *results.Run, before []apptier.ServerStats, beforeErr error) {
	if p.app == nil {
		return
	}
	st := p.app
	at := &results.AppTier{URL: st.Target, Scenario: st.Params[apptier.ParamScenario], Balancer: st.Params["balancer"], Algorithm: st.Params[apptier.OptBalance],
		HealthCheck: fmt.Sprintf("GET /healthz every %s; down after 2 failures, up after 2 successes", st.Params[apptier.OptCheck])}
	// read even when the run was interrupted: its counters belong in run.json
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	after, err := p.appStats(sctx)
	if err == nil {
		err = beforeErr
	}
	if err != nil {
		at.Note = "the balancer's counters are unavailable: " + err.Error()
		doc.Warnings = append(doc.Warnings, "app tier: "+at.Note)
	}
	prev := map[string]apptier.ServerStats{}
	for _, s := range before {
		prev[s.Proxy+"/"+s.Name] = s
	}
	addr := map[string]string{}
	for _, n := range st.Nodes {
		addr[n.Name] = n.ClientAddress()
	}
	for _, s := range after {
		b := prev[s.Proxy+"/"+s.Name]
		switch {
		case s.Proxy == "web" && s.Name == "FRONTEND":
			at.Requests, at.Responses = s.Requests-b.Requests, diffClasses(s.Responses, b.Responses)
		case s.Proxy == "app" && s.Name != "BACKEND":
			at.Servers = append(at.Servers, results.AppServer{Name: s.Name, Address: addr[s.Name], Requests: s.Requests - b.Requests,
				Responses: diffClasses(s.Responses, b.Responses), ConnErrors: s.ConnErrors - b.ConnErrors, RespErrors: s.RespErrors - b.RespErrors,
				Redispatches: s.Redispatches - b.Redispatches, Downs: s.Downs - b.Downs, StatusEnd: s.Status})
		}
	}
	settings := map[string]string{}
	for _, k := range []string{"servers", apptier.OptMaxInFlight, apptier.OptMaxQueue, apptier.OptProcs, apptier.OptRequestTimeout, apptier.OptBalance, apptier.OptCheck, "settings", apptier.ParamStore, apptier.ParamStoreEngine} {
		if v := st.Params[k]; v != "" {
			settings[k] = v
		}
	}
	doc.Tiers = append(doc.Tiers, results.Tier{Role: scenario.RoleApp, Engine: "scalelab serve " + at.Scenario,
		Cluster: &results.ClusterRef{Name: st.Name, Nodes: len(st.Nodes), Params: st.Params}, Settings: settings, Changed: []string{}, App: at})
}

// diffClasses subtracts response counts by class.
func diffClasses(now, before map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range now {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}
