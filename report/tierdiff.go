package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/scalelab/scalelab/results"
)

// tierText describes a run's tier of one role for a comparison: "redis
// 7.0.15, cluster r1 (1 node)", "(none)" when the run has no such tier.
func tierText(r *results.Run, role string) string {
	for _, t := range r.Tiers {
		if t.Role != role {
			continue
		}
		s := t.Engine
		if t.Server != nil && t.Server.Version != "" && t.Server.Version != "n/a" {
			s = withVersion(t.Engine, t.Server.Version)
		}
		if t.Cluster != nil {
			s += fmt.Sprintf(", cluster %s (%d node(s))", t.Cluster.Name, t.Cluster.Nodes)
		}
		if t.App != nil {
			s += fmt.Sprintf(", %d server(s) behind %s", len(t.App.Servers), t.App.Balancer)
		}
		return s
	}
	return "(none)"
}

// tierDiffs lists what differs between the runs' tiers beside the store
// (a cache in one run only, another cache engine, its settings): a row
// "tier ROLE" per role whose description differs, then "ROLE: key" per
// tier setting set differently, in the form of settingDiffs' rows.
func tierDiffs(runs []*compared) [][]string {
	roles := map[string]bool{}
	for _, c := range runs {
		for _, t := range c.Run.Tiers {
			roles[t.Role] = true
		}
	}
	sortedRoles := slices.Sorted(maps.Keys(roles))
	var out [][]string
	for _, role := range sortedRoles {
		if row := diffRow("tier "+role, runs, func(r *results.Run) string { return tierText(r, role) }); row != nil {
			out = append(out, row)
		}
		out = append(out, changedDiffs(role+": ", runs, func(r *results.Run) (map[string]string, []string) {
			if t := tierOf(r, role); t != nil {
				return t.Settings, t.Changed
			}
			return nil, nil
		})...)
	}
	return out
}

// sameText says what is the same when no difference is found.
const sameText = "the scenario, engine, load, every tier and every setting are the same"

func tierOf(r *results.Run, role string) *results.Tier {
	for i := range r.Tiers {
		if r.Tiers[i].Role == role {
			return &r.Tiers[i]
		}
	}
	return nil
}

// differences is every row of a comparison's "what differs" table: what
// was run (scenario, engine, load model and its parameters, segments),
// then the tiers beside the store, then the settings.
func differences(runs []*compared) [][]string {
	out := runDiffs(runs)
	out = append(out, tierDiffs(runs)...)
	return append(out, settingDiffs(runs)...)
}

// writeDifferences prints the differences for the terminal, one per line
// ("  tier cache: (none) | redis 7.0.15"), or that there are none.
func writeDifferences(w io.Writer, runs []*compared) {
	rows := differences(runs)
	if len(rows) == 0 {
		fmt.Fprintln(w, "differences: none ("+sameText+")")
		return
	}
	fmt.Fprintln(w, "differences (baseline | contenders):")
	for _, r := range rows {
		fmt.Fprintf(w, "  %s: %s\n", r[0], strings.Join(r[1:], " | "))
	}
}
