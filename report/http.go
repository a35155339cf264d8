package report

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
)

// httpReport is what a web scenario reports of its HTTP responses
// (scenario_report.http, package httpload).
type httpReport struct {
	ByOperation map[string]map[string]int64 `json:"by_operation"`
	PerSecond   []httpSecond                `json:"per_second"`
	Since       string                      `json:"since"` // what t counts from
}

// httpSecond is one second's responses by status; T is the second's
// start.
type httpSecond struct {
	T     float64          `json:"t"`
	Codes map[string]int64 `json:"codes"`
}

// httpSinceLoad is httpReport.Since when t counts from the load's start.
const httpSinceLoad = "the load began"

// httpFigures draws a web scenario's responses: per second by status code
// (the study's chart of response-code rates over time) and a table of
// each operation's responses by status. It returns the scenario report
// without its "http" part (drawn here, not by the generic tables).
func httpFigures(rep map[string]any) ([]figTable, []chart, map[string]any) {
	raw, ok := rep["http"]
	if !ok {
		return nil, nil, rep
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, nil, rep
	}
	var h httpReport
	if json.Unmarshal(b, &h) != nil || (len(h.ByOperation) == 0 && len(h.PerSecond) == 0) {
		return nil, nil, rep
	}
	rest := make(map[string]any, len(rep))
	for k, v := range rep {
		if k != "http" {
			rest[k] = v
		}
	}
	codes := map[string]bool{}
	for _, m := range h.ByOperation {
		for c := range m {
			codes[c] = true
		}
	}
	for _, s := range h.PerSecond {
		for c := range s.Codes {
			codes[c] = true
		}
	}
	order := slices.Sorted(maps.Keys(codes)) // 2xx, 3xx, 4xx, 5xx, then connection_error, timeout
	xlabel := "seconds since the first response"
	if h.Since == httpSinceLoad {
		xlabel = "seconds since the load began"
	}
	spec := lineSpec{Title: "HTTP responses per second by status", XLabel: xlabel, YLabel: "responses per second",
		XZero: true, XFmt: fmtSeconds, Empty: "no responses",
		Note: "Every response the load generator got, by status code, in each second; timeout and connection_error are requests that got no answer."}
	per := chartableHTTP(h.PerSecond)
	for i, c := range order {
		ser := lineSeries{Name: c, Color: color(i)}
		for _, s := range per {
			ser.X = append(ser.X, s.T)
			ser.Y = append(ser.Y, float64(s.Codes[c]))
		}
		spec.Series = append(spec.Series, ser)
	}
	t := figTable{Title: "HTTP responses by operation and status", Cols: append([]string{"operation"}, order...),
		Note: "Responses by status code per operation over the whole run (a post's success is its 303)."}
	ops := slices.Sorted(maps.Keys(h.ByOperation))
	for _, op := range ops {
		row := []string{op}
		for _, c := range order {
			if n := h.ByOperation[op][c]; n > 0 {
				row = append(row, strconv.FormatInt(n, 10))
			} else {
				row = append(row, "")
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return []figTable{t}, []chart{spec.render()}, rest
}

// chartableHTTP folds each second too short to chart (tooShort: the last,
// cut by the run's stop) into the second before it, whose counts take in
// its responses; one with none before it is left out.
func chartableHTTP(per []httpSecond) []httpSecond {
	ts := make([]float64, len(per))
	for i, s := range per {
		ts[i] = s.T
	}
	out := make([]httpSecond, 0, len(per))
	for i, j := range foldShort(ts) {
		switch {
		case j == i:
			out = append(out, httpSecond{T: per[i].T, Codes: maps.Clone(per[i].Codes)})
		case j >= 0 && len(out) > 0:
			p := &out[len(out)-1]
			if p.Codes == nil {
				p.Codes = map[string]int64{}
			}
			for c, n := range per[i].Codes {
				p.Codes[c] += n
			}
		}
	}
	return out
}
