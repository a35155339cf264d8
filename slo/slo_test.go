package slo

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in     string
		metric string
		cmp    Cmp
		limit  float64
		op     string
	}{
		{"p95<1s", P95, Less, 1000, ""},
		{"p99 < 250ms for read", P99, Less, 250, "read"},
		{"  p50<=500us  ", P50, LessEq, 0.5, ""},
		{"p99.9 < 2s for activity.post", P999, Less, 2000, "activity.post"},
		{"p999<1.5m", P999, Less, 90000, ""},
		{"mean < 20 ms for logs.count_a", Mean, Less, 20, "logs.count_a"},
		{"max<100ns", Max, Less, 1e-4, ""},
		{"errors<1%", ErrorRate, Less, 0.01, ""},
		{"errors <= 0", ErrorCount, LessEq, 0, ""},
		{"errors < 0.5% for update", ErrorRate, Less, 0.005, "update"},
		{"throughput>1000/s", Throughput, Greater, 1000, ""},
		{"throughput >= 250 ops/s for read", Throughput, GreaterEq, 250, "read"},
		{"throughput>42", Throughput, Greater, 42, ""},
		{"throughput >= 1000 ops/s", Throughput, GreaterEq, 1000, ""},
		{"p99 < 250 ms", P99, Less, 250, ""},
		{"errors < 1 %", ErrorRate, Less, 0.01, ""},
		{"P95 < 1s FOR read", P95, Less, 1000, "read"},
	} {
		e, err := Parse(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if e.Metric != tc.metric || e.Cmp != tc.cmp || math.Abs(e.Limit-tc.limit) > 1e-12 || e.Op != tc.op {
			t.Errorf("%q = %+v, want %s %s %v %q", tc.in, e, tc.metric, tc.cmp, tc.limit, tc.op)
		}
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", "empty"},
		{"p95 1s", "no comparison"},
		{"p96<1s", `did you mean "p90"`},
		{"troughput>1/s", `did you mean "throughput"`},
		{"latency<1s", "unknown metric"},
		{"p95<1", "needs a unit"},
		{"p95<fast", "a number with a unit"},
		{"p95<-1s", "negative"},
		{"p95==1s", "comparison"},
		{"p95<", "no value"},
		{"errors<150%", "above 100%"},
		{"errors<many", "a percentage"},
		{"throughput>lots", "operations per second"},
		{"p95<1s for", "needs an operation"},
		{"p95<1s read", "for OP"},
		{"p95<1s for read write", "one operation name"},
		{"p95<NaNs", "not a number"},
	} {
		_, err := Parse(tc.in)
		if err == nil {
			t.Errorf("%q: no error", tc.in)
			continue
		}
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %q lacks %q", tc.in, err, tc.want)
		}
	}
	if _, err := ParseList([]string{"p95<1s, errors<1%", "p99<x", "bogus"}); err == nil || strings.Count(err.Error(), "bad SLO") != 2 {
		t.Errorf("ParseList must report every bad objective: %v", err)
	}
	es, err := ParseList([]string{"p95<1s, errors<1%", "throughput>1/s"})
	if err != nil || len(es) != 3 {
		t.Errorf("ParseList = %v, %v", es, err)
	}
}

func f(v float64) *float64 { return &v }

func testRun() *results.Run {
	r := &results.Run{Summary: map[string]metrics.OpSummary{
		"read":   {Op: "read", Count: 990, Errors: 10, ThroughputPerS: 99, Latencies: metrics.Latencies{MeanMs: f(2), P50Ms: f(1), P95Ms: f(5), P99Ms: f(12)}},
		"update": {Op: "update", Count: 50, ThroughputPerS: 5, Latencies: metrics.Latencies{MeanMs: f(20), P50Ms: f(15), P95Ms: f(40), P99Ms: nil}},
	}}
	r.Totals = results.Sum(r.Summary)
	return r
}

func TestEval(t *testing.T) {
	t.Parallel()
	tab := FromRun(testRun())
	for _, tc := range []struct {
		slo  string
		pass bool
		want string
	}{
		{"p95<50ms", true, "p95 of update: 40ms < 50ms"},
		{"p95<10ms", false, "p95 of update: 40ms not < 10ms"},
		{"p95<10ms for read", true, "p95 of read"},
		{"p99<1s", false, "p99 of update is undefined"},
		{"p99<1s for read", true, ""},
		{"errors<1%", true, "error rate of (all): 0.9524% < 1%"},
		{"errors<0.5%", false, "not <"},
		{"errors<=10", true, ""},
		{"errors<1% for read", false, "error rate of read: 1%"},
		{"throughput>100/s", true, "104.0/s > 100.0/s"},
		{"throughput>=100/s for read", false, ""},
		{"p95<1s for raed", false, `operation "raed" did not run (did you mean "read"?)`},
	} {
		e, err := Parse(tc.slo)
		if err != nil {
			t.Fatal(err)
		}
		outs, ok := Check([]Expr{e}, tab)
		if ok != tc.pass {
			t.Errorf("%s: pass=%v, want %v (%+v)", tc.slo, ok, tc.pass, outs)
		}
		var details []string
		for _, o := range outs {
			details = append(details, o.Detail)
		}
		if !strings.Contains(strings.Join(details, "; "), tc.want) {
			t.Errorf("%s: details %q lack %q", tc.slo, details, tc.want)
		}
	}
	if outs, ok := Check([]Expr{{Text: "p95<1s", Metric: P95, Cmp: Less, Limit: 1000}}, Table{}); ok || len(outs) != 1 {
		t.Errorf("no operations must fail: %+v", outs)
	}
}

func TestFailures(t *testing.T) {
	t.Parallel()
	fs, err := Failures([]string{"p95<10ms for read, errors<0.5%"}, testRun())
	if err != nil || len(fs) != 1 || !strings.HasPrefix(fs[0], "SLO errors<0.5%: error rate") {
		t.Errorf("Failures = %q, %v", fs, err)
	}
	if _, err := Failures([]string{"p95<"}, testRun()); err == nil {
		t.Error("a bad SLO must be an error")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"p95<1s", "p99 < 250ms for read", "errors<1%", "throughput>1000/s", "p99.9<=2m for a.b", "errors<=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("%q: error %v does not wrap ErrSyntax", s, err)
			}
			return
		}
		if e.Limit < 0 || e.Limit != e.Limit {
			t.Fatalf("%q: limit %v", s, e.Limit)
		}
		// A parsed objective parses again to the same thing.
		e2, err := Parse(e.Text)
		if err != nil || e2 != e {
			t.Fatalf("%q: reparse %+v %v", s, e2, err)
		}
		_ = e.Eval(FromRun(testRun()))
	})
}
