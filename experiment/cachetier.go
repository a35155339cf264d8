package experiment

import "strings"

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
			for _, a := range l.Assigns {
				if v := strings.TrimSpace(a.Value); a.Key == "cache" && v != "none" && v != "" {
					out[v] = true
				}
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

// cacheCluster is the local cluster a combination's cache tier needs: the
// file's `clusters:` entry of the engine its `cache` key names, when no
// cache_target or cache_cluster says where the cache is; nil for none.
func (s *Spec) cacheCluster(tiers []Assign) *ClusterSpec {
	eng := ""
	for _, a := range tiers {
		switch v := strings.TrimSpace(a.Value); a.Key {
		case "cache":
			eng = v
			if v == "none" {
				eng = ""
			}
		case "cache_target", "cache_cluster":
			if v != "" && v != "none" {
				return nil
			}
		}
	}
	if eng == "" {
		return nil
	}
	for _, cs := range s.Clusters {
		if cs.Engine == eng {
			cp := cs
			cp.Options = map[string]string{}
			for k, v := range cs.Options {
				cp.Options[k] = v
			}
			return &cp
		}
	}
	return nil
}
