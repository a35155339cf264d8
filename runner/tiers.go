package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
)

// TierOptions name a connection of the run beside the store, by role
// (--cache ENGINE --cache-target T or --cache-cluster NAME).
type TierOptions struct {
	Role    string // scenario.RoleCache, ...
	Engine  string // "" with Cluster: the cluster's engine
	Target  string // exclusive with Cluster
	Cluster string // a local cluster started with `scalelab cluster up`
}

// planTier is a resolved tier: its engine, settings and cluster.
type planTier struct {
	role     string
	eng      engine.Engine
	target   string
	cluster  *cluster.State
	settings *setting.Set
}

// planTiers resolves the tiers of f against what the scenario declares,
// and routes each --set ROLE.KEY=VALUE to its tier; it returns the --set
// assignments left for the store and the scenario.
func planTiers(f *Options, scen scenario.Scenario) ([]planTier, []string, error) {
	declared := map[string]bool{}
	if tu, ok := scen.(scenario.TierUser); ok {
		for _, ts := range tu.Tiers() {
			declared[ts.Role] = true
		}
	}
	var tiers []planTier
	seen := map[string]bool{}
	for _, t := range f.Tiers {
		flag := "--" + t.Role
		if seen[t.Role] {
			return nil, nil, results.UsageErr("%s given twice", flag)
		}
		seen[t.Role] = true
		if !declared[t.Role] {
			return nil, nil, results.UsageErr("%s: scenario %s uses no %s tier%s", flag, scen.Name(), t.Role, tierList(scen))
		}
		pt := planTier{role: t.Role, target: t.Target}
		name := t.Engine
		if t.Cluster != "" {
			if t.Target != "" {
				return nil, nil, results.UsageErr("%s-cluster and %s-target are exclusive", flag, flag)
			}
			cl, err := cluster.Load(t.Cluster)
			if err != nil {
				return nil, nil, results.UsageErr("%s-cluster: %v", flag, err)
			}
			if name == "" {
				name = cl.Engine
			} else if name != cl.Engine {
				return nil, nil, results.UsageErr("%s-cluster %s is a %s cluster, but %s %s was given; drop %s (the cluster implies it) or name a %s cluster", flag, cl.Name, cl.Engine, flag, name, flag, name)
			}
			pt.cluster, pt.target = cl, cl.Target
		}
		if name == "" {
			return nil, nil, results.UsageErr("%s-target or %s-cluster needs %s ENGINE", flag, flag, flag)
		}
		eng, err := engine.Lookup(name)
		if err != nil {
			return nil, nil, results.UsageErr("%s: %v", flag, err)
		}
		if caches := engine.WithCache(); t.Role == scenario.RoleCache && !slices.Contains(caches, name) {
			return nil, nil, results.UsageErr("%s %s: engine %s is no key-value cache; allowed: %s", flag, name, name, strings.Join(caches, "|"))
		}
		if tc, ok := eng.(engine.TargetChecker); ok && t.Target != "" {
			if err := tc.CheckTarget(t.Target); err != nil {
				return nil, nil, results.WithCode(results.ExitUsage, fmt.Errorf("%s-target: %w", flag, err))
			}
		}
		pt.eng, pt.settings = eng, setting.NewSet(eng.Settings()...)
		tiers = append(tiers, pt)
	}
	var rest []string
	for _, a := range f.Sets {
		key, _, _ := strings.Cut(a, "=")
		role, _, ok := strings.Cut(strings.TrimSpace(key), ".")
		// the scenario's own keys under a tier's name (cache.mode) stay
		// with the scenario; the tier's engine gets the rest (cache.pool_size)
		if !ok || !seen[role] || scenario.Declares(scen, strings.TrimSpace(key)) {
			rest = append(rest, a)
			continue
		}
		for _, pt := range tiers {
			if pt.role == role {
				inner := strings.TrimPrefix(strings.TrimSpace(a), role+".")
				if err := pt.settings.Apply(inner); err != nil {
					if ik, _, _ := strings.Cut(inner, "="); errors.Is(err, setting.ErrUnknownKey) {
						// the tier's keys are named under its role
						msg := fmt.Sprintf("--set %s: the %s tier's engine %s has no setting %q", a, role, pt.eng.Name(), strings.TrimSpace(ik))
						if n := setting.Nearest(strings.TrimSpace(ik), pt.settings.Keys()); n != "" {
							msg += fmt.Sprintf(" (did you mean %q?)", role+"."+n)
						}
						return nil, nil, results.UsageErr("%s; 'scalelab list settings %s' prints them (as %s.KEY here)", msg, pt.eng.Name(), role)
					}
					return nil, nil, results.WithCode(results.ExitUsage, fmt.Errorf("--set %s (the %s tier, engine %s): %w", a, role, pt.eng.Name(), err))
				}
			}
		}
	}
	return tiers, rest, nil
}

// tierList says which tiers a scenario uses, for an error.
func tierList(scen scenario.Scenario) string {
	tu, ok := scen.(scenario.TierUser)
	if !ok || len(tu.Tiers()) == 0 {
		return " (it uses the store only)"
	}
	var roles []string
	for _, ts := range tu.Tiers() {
		roles = append(roles, ts.Role)
	}
	return " (it uses: " + strings.Join(roles, ", ") + ")"
}

// openTiers connects every tier, recording each in run.json; on error it
// closes what it opened. The returned function closes them all.
func (p *Plan) openTiers(ctx context.Context, doc *results.Run) (map[string]scenario.Tier, func(), error) {
	out := map[string]scenario.Tier{}
	var conns []engine.Conn
	closeAll := func() {
		for _, c := range conns {
			c.Close()
		}
	}
	for _, pt := range p.tiers {
		cfg := engine.Config{Target: pt.target, Settings: pt.settings, Dir: p.dir, Cluster: pt.cluster}
		conn, err := pt.eng.Open(ctx, cfg)
		if err != nil {
			closeAll()
			hint := ""
			if strings.Contains(err.Error(), "--target") {
				// the engine's advice names the store's flags
				hint = fmt.Sprintf(" (for the %s tier: --%s-target and --%s-cluster)", pt.role, pt.role, pt.role)
			}
			return nil, nil, results.WithCode(ConnectExitCode(err), fmt.Errorf("connect to the %s tier (%s): %w%s", pt.role, pt.eng.Name(), err, hint))
		}
		conns = append(conns, conn)
		rt := results.Tier{Role: pt.role, Engine: pt.eng.Name(), Settings: redactSettings(pt.settings.Map()), Changed: pt.settings.Changed()}
		if pt.cluster != nil {
			rt.Cluster = &results.ClusterRef{Name: pt.cluster.Name, Nodes: len(pt.cluster.Nodes), Params: pt.cluster.Params}
		}
		if info, err := conn.Info(ctx); err == nil {
			rt.Server = &results.Server{Version: info.Version, Product: info.Product, Target: redactTarget(info.Target), Extra: info.Extra}
		} else {
			doc.Warnings = append(doc.Warnings, fmt.Sprintf("%s tier: server info unavailable: %v", pt.role, err))
		}
		doc.Tiers = append(doc.Tiers, rt)
		out[pt.role] = scenario.Tier{Engine: pt.eng.Name(), Conn: conn, Settings: pt.settings}
	}
	return out, closeAll, nil
}

// classifiers are the Classifiers of the store and the tiers, in that
// order: an error a session returns is classed by the first that
// recognises it.
func classifiers(store engine.Conn, tiers map[string]scenario.Tier) []engine.Classifier {
	var out []engine.Classifier
	if c, ok := store.(engine.Classifier); ok {
		out = append(out, c)
	}
	for _, t := range tiers {
		if c, ok := t.Conn.(engine.Classifier); ok {
			out = append(out, c)
		}
	}
	return out
}
