package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// maxListRows bounds the rows shown of a list in the scenario figures.
const maxListRows = 100

// scenarioFigures lays out run.json's scenario_report (what a scenario
// measured beyond latencies: stale and fresh reads per operation, the
// delays of freshness probes, ground truths...), whatever its shape:
//   - the single values of a map in one table;
//   - maps of single values grouped by their keys, so that maps over the
//     same operations (stale_reads, fresh_reads) or the same statistics
//     (count, mean, p50, ...) share one table with a column each; with
//     stale_reads and fresh_reads side by side, a stale share column and a
//     bar chart;
//   - lists of maps as tables with a row per item (and a chart of
//     delay_ms per item, the freshness probes' delays);
//   - deeper maps the same way, titled by their path.
func scenarioFigures(rep map[string]any) ([]figTable, []chart) {
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
	var fw figWalker
	fw.walk("", rep)
	return fw.tables, fw.charts
}

type figWalker struct {
	tables []figTable
	charts []chart
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (fw *figWalker) walk(path string, m map[string]any) {
	scalars := figTable{Title: path, Cols: []string{"figure", "value"}, Wrap: true}
	if path == "" {
		scalars.Title = "Figures"
	}
	type group struct {
		keys []string
		cols []string
		maps []map[string]any
	}
	groups := map[string]*group{}
	var order []string
	var nested, lists []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch v := m[k].(type) {
		case map[string]any:
			if len(v) == 0 || !flat(v) {
				nested = append(nested, k)
				continue
			}
			keys := slices.Sorted(maps.Keys(v))
			sig := strings.Join(keys, "\x00")
			g := groups[sig]
			if g == nil {
				g = &group{keys: keys}
				groups[sig] = g
				order = append(order, sig)
			}
			g.cols = append(g.cols, k)
			g.maps = append(g.maps, v)
		case []any:
			if listOfMaps(v) {
				lists = append(lists, k)
			} else {
				scalars.Rows = append(scalars.Rows, []string{k, figValue(v)})
			}
		default:
			scalars.Rows = append(scalars.Rows, []string{k, figValue(v)})
		}
	}
	if len(scalars.Rows) > 0 {
		fw.tables = append(fw.tables, scalars)
	}
	for _, sig := range order {
		fw.group(path, groups[sig].keys, groups[sig].cols, groups[sig].maps)
	}
	for _, k := range lists {
		fw.list(joinPath(path, k), m[k].([]any))
	}
	for _, k := range nested {
		fw.walk(joinPath(path, k), m[k].(map[string]any))
	}
}

// group draws maps with the same keys as one table, a column per map.
func (fw *figWalker) group(path string, keys, cols []string, maps []map[string]any) {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = joinPath(path, c)
	}
	t := figTable{Title: strings.Join(names, ", "), Cols: append([]string{""}, cols...)}
	si, fi := indexOf(cols, "stale_reads"), indexOf(cols, "fresh_reads")
	share := si >= 0 && fi >= 0
	if share {
		t.Cols = append(t.Cols, "stale share")
		t.Note = "stale share = stale_reads / (stale_reads + fresh_reads)"
	}
	var bars []barItem
	for _, k := range keys {
		row := []string{k}
		for _, m := range maps {
			row = append(row, figValue(m[k]))
		}
		if share {
			s, f := toFloat(maps[si][k]), toFloat(maps[fi][k])
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
	if share {
		spec := barSpec{Title: "Stale reads" + strings.TrimPrefix(" ("+path+")", " ()"), XLabel: "% of reads that missed an acknowledged earlier write",
			Fmt: func(v float64) string { return trimNum(v, 2) + "%" }, Bars: bars}
		fw.charts = append(fw.charts, spec.render())
	}
	fw.tables = append(fw.tables, t)
}

// list draws a list of maps as a table with a row per item, and the
// delay_ms of each item (freshness probes) as a chart.
func (fw *figWalker) list(path string, items []any) {
	colSet := map[string]bool{}
	for _, it := range items {
		for k := range it.(map[string]any) {
			colSet[k] = true
		}
	}
	cols := slices.Sorted(maps.Keys(colSet))
	t := figTable{Title: path, Cols: append([]string{"#"}, cols...)}
	var xs, delays []float64
	for i, it := range items {
		m := it.(map[string]any)
		if d, ok := m["delay_ms"].(float64); ok {
			xs, delays = append(xs, float64(i+1)), append(delays, d)
		}
		if i < maxListRows {
			row := []string{strconv.Itoa(i + 1)}
			for _, c := range cols {
				row = append(row, figValue(m[c]))
			}
			t.Rows = append(t.Rows, row)
		}
	}
	if len(items) > maxListRows {
		t.Note = fmt.Sprintf("The first %d of %d.", maxListRows, len(items))
	}
	if len(delays) > 0 {
		spec := lineSpec{Title: path + ": delay_ms of each", XLabel: "#", YLabel: "ms", YFmt: fmtNum,
			Series: []lineSeries{{Name: "delay_ms", X: xs, Y: delays, Color: color(3), Markers: len(delays) <= 200}}}
		fw.charts = append(fw.charts, spec.render())
	}
	fw.tables = append(fw.tables, t)
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

func listOfMaps(v []any) bool {
	if len(v) == 0 {
		return false
	}
	for _, it := range v {
		m, ok := it.(map[string]any)
		if !ok || !flat(m) {
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
	if f, ok := v.(float64); ok {
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
		return strconv.FormatBool(x)
	case float64:
		switch {
		case x == math.Trunc(x) && math.Abs(x) < 1e15:
			return strconv.FormatFloat(x, 'f', 0, 64)
		case math.Abs(x) >= 1000:
			return fmtNum(x)
		}
		return strconv.FormatFloat(x, 'g', 4, 64)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
