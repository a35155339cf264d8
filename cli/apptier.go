package cli

import (
	"os"
	"strings"

	"github.com/scalelab/scalelab/apptier"
	"github.com/scalelab/scalelab/cache"
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
)

// Binaries that link the command line (scalelab, its test binaries) run it
// when a node's environment says so: how an app cluster starts its
// servers with the binary that started it.
func init() {
	if os.Getenv(apptier.EnvCLI) != "" {
		Exec()
	}
}

// appSpec checks `cluster up app`'s flags against the scenario and the
// store's engine (a bad setting is refused here, not in N server logs) and
// writes them into spec's options.
func appSpec(spec *cluster.Spec, scen, store, cacheCl string, servers int, sets []string) error {
	if spec.Nodes != 0 {
		return usageErr("cluster up app: give the number of app servers with --servers, not --nodes")
	}
	if servers < 0 || servers > apptier.MaxServers {
		return usageErr("cluster up app: --servers %d: allowed 1 to %d on one machine", servers, apptier.MaxServers)
	}
	spec.Nodes = servers
	if scen == "" {
		return usageErr("cluster up app: --scenario is required; web scenarios: %s", strings.Join(webScenarios(), ", "))
	}
	s, err := scenario.Lookup(scen)
	if err != nil {
		return usageErr("cluster up app: --scenario: %v", err)
	}
	if _, ok := s.(scenario.Server); !ok {
		return usageErr("cluster up app: scenario %s is not a web application; web scenarios: %s", scen, strings.Join(webScenarios(), ", "))
	}
	engName := engine.Default
	if store != "" {
		st, err := cluster.Load(store)
		if err != nil {
			return usageErr("cluster up app: --cluster: %v", err)
		}
		if st.Engine == apptier.Name {
			return usageErr("cluster up app: --cluster %s is an app cluster; name the store cluster the servers use", store)
		}
		engName = st.Engine
	}
	eng, err := engine.Lookup(engName)
	if err != nil {
		return usageErr("cluster up app: %v", err)
	}
	if !scenario.Supports(s, engName) {
		return usageErr("cluster up app: scenario %s has no storage for engine %s; it supports: %s", scen, engName, strings.Join(s.Engines(), ", "))
	}
	set := setting.NewSet(append(append([]setting.Spec{}, eng.Settings()...), s.Settings()...)...)
	for _, a := range sets {
		if err := set.Apply(a); err != nil {
			return usageErr("cluster up app: --set %s: %v", a, err)
		}
		k, v, _ := strings.Cut(a, "=")
		spec.Options[apptier.SetPrefix+strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	if scenario.Declares(s, cache.KeyMode) && set.Get(cache.KeyMode).String() == string(cache.Shared) && cacheCl == "" {
		return usageErr("cluster up app: cache.mode=shared needs the cache tier's cluster: --cache-cluster NAME (a %s cluster)", strings.Join(engine.WithCache(), " or "))
	}
	if cacheCl != "" {
		cst, err := cluster.Load(cacheCl)
		if err != nil {
			return usageErr("cluster up app: --cache-cluster: %v", err)
		}
		if ce, err := engine.Lookup(cst.Engine); err != nil || !isCache(ce) {
			return usageErr("cluster up app: --cache-cluster %s is a %s cluster; a cache tier is one of: %s", cacheCl, cst.Engine, strings.Join(engine.WithCache(), ", "))
		}
		if tu, ok := s.(scenario.TierUser); !ok || !usesTier(tu, scenario.RoleCache) {
			return usageErr("cluster up app: scenario %s uses no cache tier", scen)
		}
		spec.Options[apptier.OptCache] = cacheCl
	}
	spec.Options[apptier.OptScenario] = scen
	if store != "" {
		spec.Options[apptier.OptStore] = store
	}
	return nil
}

// isCache reports whether e's connections are key-value caches.
func isCache(e engine.Engine) bool {
	c, ok := e.(engine.CacheEngine)
	return ok && c.HasCache()
}

// usesTier reports whether a scenario declares a tier of role.
func usesTier(tu scenario.TierUser, role string) bool {
	for _, t := range tu.Tiers() {
		if t.Role == role {
			return true
		}
	}
	return false
}
