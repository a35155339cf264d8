package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/scalelab/scalelab/results"
)

// ranFact is one thing a run was given to do, compared across runs: its
// key in the differences and how a run's run.json reads it.
type ranFact struct {
	Key string
	Get func(r *results.Run) string
}

// ranFacts are what was run beside the tiers and settings: the scenario,
// the engine, its cluster, the load model and how long it ran, the seed
// and the segments. The load model's parameters follow them in runDiffs.
var ranFacts = []ranFact{
	{"scenario", func(r *results.Run) string { return r.Scenario }},
	{"engine", engineText},
	{"cluster", clusterText},
	{"load model", func(r *results.Run) string { return r.Load.Model }},
	{"duration", func(r *results.Run) string { return secondsOrNone(r.Load.DurationS) }},
	{"ops budget", func(r *results.Run) string {
		if r.Load.Ops > 0 {
			return fmt.Sprint(r.Load.Ops)
		}
		return "(none)"
	}},
	{"warm-up", func(r *results.Run) string { return secondsOrNone(r.Load.WarmupS) }},
	{"seed", func(r *results.Run) string { return fmt.Sprint(r.Load.Seed) }},
	{"segments", segmentsText},
}

// engineText is a run's engine and, where it was recorded, its server's
// version without the build details: "sqlite 3.45.1", "PostgreSQL 15.18"
// (the banner names the product the engine is named after).
func engineText(r *results.Run) string {
	if r.Server != nil && r.Server.Version != "" && r.Server.Version != "n/a" {
		return withVersion(r.Engine, r.Server.Version)
	}
	return r.Engine
}

// withVersion is an engine's name and its server's short version, or the
// short version alone when it starts with the product's name.
func withVersion(engine, version string) string {
	v := shortVersion(version)
	first, _, _ := strings.Cut(v, " ")
	if strings.HasPrefix(strings.ToLower(first), strings.ToLower(engine)) {
		return v
	}
	return engine + " " + v
}

// clusterText is the shape of the local cluster a run ran against, its
// name left out ("3 node(s) (replicas=2)"), or "(none)".
func clusterText(r *results.Run) string {
	c := r.Cluster
	if c == nil {
		return "(none)"
	}
	s := fmt.Sprintf("%d node(s)", c.Nodes)
	shape := map[string]string{}
	for k, v := range c.Params {
		if !incidental[k] {
			shape[k] = v
		}
	}
	if len(shape) > 0 {
		s += " (" + kvList(shape) + ")"
	}
	return s
}

// incidental are the cluster params that differ between clusters of the
// same shape (how long one took to start, the names, paths and sockets
// of its parts), left out of the comparison of what was run. The server's
// version is compared with the engine.
var incidental = map[string]bool{
	"up_seconds": true, "version": true, "stats_socket": true, "store_cluster": true, "store_target": true,
	"cache_cluster": true, "bin_dir": true, "ca_file": true, "os_user": true, "network": true,
}

// segmentsText is how much of a divided test a run is: "1" for a whole
// test, "segment 2 of 4" for one share, "4 merged" for a merged result.
func segmentsText(r *results.Run) string {
	switch {
	case r.Merged != nil:
		return fmt.Sprintf("%d merged", r.Merged.Count)
	case r.Segment != nil:
		return fmt.Sprintf("segment %d of %d", r.Segment.Index, r.Segment.Count)
	}
	return "1"
}

func secondsOrNone(s float64) string {
	if s <= 0 {
		return "(none)"
	}
	return fmtDuration(s)
}

// paramText formats a load parameter as run.json holds it: a list
// comma-separated, an object as JSON, anything else as printed.
func paramText(v any) string {
	switch p := v.(type) {
	case []any:
		parts := make([]string, len(p))
		for i, e := range p {
			parts[i] = paramText(e)
		}
		return strings.Join(parts, ", ")
	case []string:
		return strings.Join(p, ", ")
	case map[string]any:
		if b, err := json.Marshal(p); err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v)
}

// runDiffs lists what differs between the runs in what they ran: a row
// per ranFacts entry that differs, then "load: KEY" per load-model
// parameter that differs ("(none)" where a run's model has no such
// parameter), in the form of settingDiffs' rows.
func runDiffs(runs []*compared) [][]string {
	var out [][]string
	for _, f := range ranFacts {
		if row := diffRow(f.Key, runs, f.Get); row != nil {
			out = append(out, row)
		}
	}
	keys := map[string]bool{}
	for _, c := range runs {
		for k := range c.Run.Load.Params {
			keys[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		row := diffRow("load: "+k, runs, func(r *results.Run) string {
			if v, ok := r.Load.Params[k]; ok {
				return paramText(v)
			}
			return "(none)"
		})
		if row != nil {
			out = append(out, row)
		}
	}
	return out
}

// diffRow is the row key, then every run's value, when the values are not
// all the same; nil when they are.
func diffRow(key string, runs []*compared, get func(r *results.Run) string) []string {
	row := []string{key}
	same := true
	for i, c := range runs {
		row = append(row, get(c.Run))
		same = same && (i == 0 || row[i+1] == row[1])
	}
	if same {
		return nil
	}
	return row
}
