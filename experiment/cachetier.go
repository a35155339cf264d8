package experiment

import (
	"strings"

	"github.com/scalelab/scalelab/runner"
)

// ClusterNames names the local clusters one run uses.
type ClusterNames struct {
	// Run is the cluster the run names with --cluster: the app cluster's
	// when there is one, else the store's ("" for none).
	Run string
	// Cache is the cache tier's cluster the experiment started ("" for
	// none): the run gets it as --cache-cluster, an app tier's servers
	// cache in it.
	Cache string
}

// cacheEngines lists the engines the file's `cache` keys name (the cache
// tier's engine, none excluded).
func (s *Spec) cacheEngines() map[string]bool {
	out := map[string]bool{}
	for _, f := range s.Factors {
		for _, l := range f.Levels {
			if e := cacheTier(l.Assigns).Engine; e != "" {
				out[e] = true
			}
		}
	}
	return out
}

// storeClusters is the file's `clusters:` entries for stores: those whose
// engine no `cache` key names. An entry of a cache engine is the cache
// tier's cluster.
func (s *Spec) storeClusters() []ClusterSpec {
	caches := s.cacheEngines()
	var out []ClusterSpec
	for _, c := range s.Clusters {
		if !caches[c.Engine] {
			out = append(out, c)
		}
	}
	return out
}

// cacheTier is the cache tier a combination's tier keys ask for: its
// engine (none: no cache), target and local cluster.
func cacheTier(tiers []Assign) runner.TierOptions {
	var t runner.TierOptions
	for _, a := range tiers {
		switch v := strings.TrimSpace(a.Value); a.Key {
		case "cache":
			if v != "none" {
				t.Engine = v
			}
		case "cache_target":
			t.Target = v
		case "cache_cluster":
			if v != "none" {
				t.Cluster = v
			}
		}
	}
	return t
}

// cacheCluster is the local cluster a combination's cache tier needs: the
// file's `clusters:` entry of the engine its `cache` key names, when no
// cache_target or cache_cluster says where the cache is; nil for none.
func (s *Spec) cacheCluster(tiers []Assign) *ClusterSpec {
	t := cacheTier(tiers)
	if t.Engine == "" || t.Target != "" || t.Cluster != "" {
		return nil
	}
	for _, cs := range s.Clusters {
		if cs.Engine == t.Engine {
			cp := cs
			return &cp
		}
	}
	return nil
}

// PlanNames are the cluster names a plan shows for each combination (by
// ID) where a run will name the clusters the experiment starts, whose
// names are known only then: CLUSTER_cNN for its store or app cluster
// and CACHE_cNN for its cache tier's, cNN the first combination that
// runs on that cluster. Combinations on one cluster show one name.
func PlanNames(combos []*Combination) map[string]ClusterNames {
	out := map[string]ClusterNames{}
	for _, g := range groups(combos) {
		first := combos[g.combos[0]].ID
		var n ClusterNames
		if g.spec != nil || g.app != nil {
			n.Run = "CLUSTER_" + first
		}
		if g.cache != nil {
			n.Cache = "CACHE_" + first
		}
		for _, i := range g.combos {
			out[combos[i].ID] = n
		}
	}
	return out
}
