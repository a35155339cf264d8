package report

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// scenarioFigures lays out run.json's scenario_report (what a scenario
// measured beyond latencies, such as stale and fresh reads per operation):
// single values in one table; maps of values grouped by their key sets,
// so that maps over the same operations share one table with a column
// each; anything deeper as compact JSON. When stale_reads and fresh_reads
// are both there, a stale share column and bar chart are added.
func scenarioFigures(rep map[string]any) ([]figTable, *chart) {
	if len(rep) == 0 {
		return nil, nil
	}
	// A live run hands over Go values (map[string]int64, structs...); the
	// JSON round trip gives the same shapes as a run.json read back.
	if b, err := json.Marshal(rep); err == nil {
		var norm map[string]any
		if json.Unmarshal(b, &norm) == nil {
			rep = norm
		}
	}
	names := make([]string, 0, len(rep))
	for k := range rep {
		names = append(names, k)
	}
	sort.Strings(names)
	scalars := figTable{Title: "Figures", Cols: []string{"figure", "value"}, Wrap: true}
	type group struct {
		keys []string
		cols []string
		maps []map[string]any
	}
	groups := map[string]*group{}
	var order []string
	for _, name := range names {
		m, ok := rep[name].(map[string]any)
		if !ok || !flat(m) || len(m) == 0 {
			scalars.Rows = append(scalars.Rows, []string{name, figValue(rep[name])})
			continue
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		sig := strings.Join(keys, "\x00")
		g := groups[sig]
		if g == nil {
			g = &group{keys: keys}
			groups[sig] = g
			order = append(order, sig)
		}
		g.cols = append(g.cols, name)
		g.maps = append(g.maps, m)
	}
	var out []figTable
	var stale *chart
	for _, sig := range order {
		g := groups[sig]
		t := figTable{Title: strings.Join(g.cols, ", "), Cols: append([]string{""}, g.cols...)}
		si, fi := indexOf(g.cols, "stale_reads"), indexOf(g.cols, "fresh_reads")
		share := si >= 0 && fi >= 0
		if share {
			t.Cols = append(t.Cols, "stale share")
			t.Note = "stale share = stale_reads / (stale_reads + fresh_reads)"
		}
		var bars []barItem
		for _, k := range g.keys {
			row := []string{k}
			for _, m := range g.maps {
				row = append(row, figValue(m[k]))
			}
			if share {
				s, f := toFloat(g.maps[si][k]), toFloat(g.maps[fi][k])
				frac := math.NaN()
				if s+f > 0 {
					frac = s / (s + f)
				}
				row = append(row, fmtPct(frac))
				bars = append(bars, barItem{Label: k, V: frac * 100, Lo: math.NaN(), Hi: math.NaN(), Color: color(1),
					Tip: fmt.Sprintf("%s: %s stale of %s reads", k, fmtNum(s), fmtNum(s+f))})
			}
			t.Rows = append(t.Rows, row)
		}
		if share && stale == nil {
			spec := barSpec{Title: "Stale reads", XLabel: "% of reads that missed an acknowledged earlier write",
				Fmt: func(v float64) string { return trimNum(v, 2) + "%" }, Bars: bars}
			c := spec.render()
			stale = &c
		}
		out = append(out, t)
	}
	if len(scalars.Rows) > 0 {
		out = append(out, scalars)
	}
	return out, stale
}

func flat(m map[string]any) bool {
	for _, v := range m {
		switch v.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

func indexOf(s []string, x string) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return -1
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case json.Number:
		f, _ := x.Float64()
		return f
	}
	return 0
}

// figValue formats a figure: numbers short, strings as they are, anything
// else as compact JSON.
func figValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case string:
		return x
	case bool:
		return fmt.Sprint(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return fmt.Sprintf("%.0f", x)
		}
		return fmtNum(x)
	case int, int64, uint64:
		return fmt.Sprint(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
