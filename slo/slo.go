// Package slo parses service-level objectives such as `p95<1s`,
// `p99 < 250ms for read`, `errors<1%` and `throughput>1000/s`, and checks
// them against a run's figures. `scalelab check`, `scalelab run --slo` and
// experiments share it.
//
// Grammar: METRIC OP VALUE [for OPERATION], with
//
//	METRIC     p50 | p90 | p95 | p99 | p99.9 (or p999) | mean | max | errors | throughput
//	OP         < | <= | > | >=
//	VALUE      latencies: a number with a unit (500us, 250ms, 1s, 1.5m);
//	           errors: a percentage of finished operations (1%) or a count (0);
//	           throughput: operations per second (1000/s, 1000)
//
// Without `for`, a latency objective must hold for every operation (run.json
// has no latency over all operations), while errors and throughput apply to
// the totals.
package slo

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/setting"
)

// Figure keys: the metrics a Table holds for each operation.
const (
	Throughput = "throughput" // operations per second over the measured window
	ErrorRate  = "error_rate" // errors / (count + errors), a fraction
	ErrorCount = "error_count"
	Mean       = "mean" // latencies in milliseconds
	P50        = "p50"
	P90        = "p90"
	P95        = "p95"
	P99        = "p99"
	P999       = "p999"
	Max        = "max"
)

// CPUPerOpPrefix starts the figure keys of a tier's CPU time per
// measured operation in microseconds ("cpu_per_op_us.store"), from the
// run's telemetry; only the totals (AllOps) have them.
const CPUPerOpPrefix = "cpu_per_op_us."

// AllOps is the Table key of the totals over every operation.
const AllOps = "(all)"

// Figures maps a figure key to its value. A missing key is undefined, for
// example a percentile the sample count cannot support.
type Figures map[string]float64

// Table holds figures per operation, with the totals under AllOps.
type Table map[string]Figures

// Ops returns the operations of the table, sorted, without AllOps.
func (t Table) Ops() []string {
	var ops []string
	for op := range t {
		if op != AllOps {
			ops = append(ops, op)
		}
	}
	sort.Strings(ops)
	return ops
}

// FromRun extracts a run's figures from its run.json document.
func FromRun(r *results.Run) Table {
	t := Table{}
	for op, s := range r.Summary {
		f := Figures{Throughput: s.ThroughputPerS, ErrorCount: float64(s.Errors), ErrorRate: 0}
		if done := s.Count + s.Errors; done > 0 {
			f[ErrorRate] = float64(s.Errors) / float64(done)
		}
		for k, v := range map[string]*float64{Mean: s.MeanMs, P50: s.P50Ms, P90: s.P90Ms, P95: s.P95Ms, P99: s.P99Ms, P999: s.P999Ms, Max: s.MaxMs} {
			if v != nil {
				f[k] = *v
			}
		}
		t[op] = f
	}
	tot := results.Sum(r.Summary)
	if r.Totals != nil {
		tot = r.Totals
	}
	t[AllOps] = Figures{Throughput: tot.ThroughputPerS, ErrorRate: tot.ErrorRate, ErrorCount: float64(tot.Errors)}
	if r.Telemetry != nil {
		for _, tu := range r.Telemetry.Tiers {
			if tu.CPUPerOpUs > 0 {
				t[AllOps][CPUPerOpPrefix+tu.Tier] = tu.CPUPerOpUs
			}
		}
	}
	return t
}

// Cmp is a comparison operator.
type Cmp string

// The comparison operators.
const (
	Less      Cmp = "<"
	LessEq    Cmp = "<="
	Greater   Cmp = ">"
	GreaterEq Cmp = ">="
)

func (c Cmp) holds(v, limit float64) bool {
	switch c {
	case Less:
		return v < limit
	case LessEq:
		return v <= limit
	case Greater:
		return v > limit
	case GreaterEq:
		return v >= limit
	}
	return false
}

// Expr is one parsed objective.
type Expr struct {
	Text   string  // as written, trimmed
	Metric string  // a figure key (p95, error_rate, throughput, ...)
	Cmp    Cmp     // comparison
	Limit  float64 // in the figure's unit: ms, fraction, count or ops/s
	Op     string  // the operation after `for`; "" for every operation or the totals
}

// ErrSyntax is wrapped by every parse error.
var ErrSyntax = errors.New("bad SLO")

// metricNames maps what users write to figure keys ("errors" is resolved by
// the value's form).
var metricNames = map[string]string{
	"p50": P50, "p90": P90, "p95": P95, "p99": P99, "p99.9": P999, "p999": P999,
	"mean": Mean, "avg": Mean, "max": Max, "errors": ErrorRate, "error_rate": ErrorRate,
	"throughput": Throughput, "ops": Throughput,
}

// Metrics lists the metric names users can write, for help and errors.
const Metrics = "p50|p90|p95|p99|p99.9|mean|max|errors|throughput"

// Example is shown in syntax errors.
const Example = "e.g. 'p95<1s', 'p99 < 250ms for read', 'errors<1%', 'throughput>1000/s'"

// IsLatency reports whether a figure key is a latency in milliseconds.
func IsLatency(metric string) bool {
	switch metric {
	case Mean, P50, P90, P95, P99, P999, Max:
		return true
	}
	return false
}

// Parse parses one objective.
func Parse(s string) (Expr, error) {
	text := strings.TrimSpace(s)
	bad := func(format string, a ...any) (Expr, error) {
		return Expr{}, fmt.Errorf("%w %q: %s; %s", ErrSyntax, text, fmt.Sprintf(format, a...), Example)
	}
	if text == "" {
		return bad("empty")
	}
	// The metric runs up to the operator.
	i := strings.IndexAny(text, "<>=!")
	if i < 0 {
		return bad("no comparison (<, <=, > or >=)")
	}
	name := strings.ToLower(strings.TrimSpace(text[:i]))
	rest := text[i:]
	var cmp Cmp
	switch {
	case strings.HasPrefix(rest, "<="):
		cmp = LessEq
	case strings.HasPrefix(rest, ">="):
		cmp = GreaterEq
	case strings.HasPrefix(rest, "<"):
		cmp = Less
	case strings.HasPrefix(rest, ">"):
		cmp = Greater
	default:
		return bad("comparison %q; allowed: <, <=, >, >=", rest[:min(2, len(rest))])
	}
	rest = strings.TrimSpace(rest[len(cmp):])
	metric, ok := metricNames[name]
	if !ok {
		var names []string
		for k := range metricNames {
			names = append(names, k)
		}
		sort.Strings(names)
		msg := fmt.Sprintf("unknown metric %q; allowed: %s", name, Metrics)
		if n := setting.Nearest(name, names); n != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", n)
		}
		return bad("%s", msg)
	}
	// The value, then optionally "for OP".
	value, op := rest, ""
	if j := indexWord(rest, "for"); j >= 0 {
		value, op = strings.TrimSpace(rest[:j]), strings.TrimSpace(rest[j+3:])
		if op == "" {
			return bad("`for` needs an operation name")
		}
		if strings.ContainsFunc(op, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune("<>=,", r) }) {
			return bad("operation %q: one operation name expected after `for`", op)
		}
	} else if f := strings.Fields(rest); len(f) == 2 && units[f[1]] {
		value = f[0] + f[1] // a unit after a space: "1000 ops/s", "250 ms"
	} else if len(f) > 1 {
		return bad("unexpected %q after the value (to name an operation: `for OP`)", strings.Join(f[1:], " "))
	}
	if value == "" {
		return bad("no value after %s", cmp)
	}
	e := Expr{Text: text, Metric: metric, Cmp: cmp, Op: op}
	var err error
	switch {
	case IsLatency(metric):
		e.Limit, err = parseLatency(value)
	case metric == ErrorRate:
		e.Metric, e.Limit, err = parseErrors(value)
	case metric == Throughput:
		e.Limit, err = parseThroughput(value)
	}
	if err != nil {
		return bad("%v", err)
	}
	return e, nil
}

// indexWord finds word as a whole, space-separated word in s.
func indexWord(s, word string) int {
	for i := 0; i+len(word) <= len(s); i++ {
		if !strings.EqualFold(s[i:i+len(word)], word) {
			continue
		}
		before := i == 0 || s[i-1] == ' ' || s[i-1] == '\t'
		after := i+len(word) == len(s) || s[i+len(word)] == ' ' || s[i+len(word)] == '\t'
		if before && after {
			return i
		}
	}
	return -1
}

// number parses a finite, non-negative number.
func number(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return v, nil
}

var latencyUnits = []struct {
	suffix string
	ms     float64
}{{"ns", 1e-6}, {"us", 1e-3}, {"µs", 1e-3}, {"ms", 1}, {"s", 1000}, {"m", 60000}}

// parseLatency parses "250ms" into milliseconds.
func parseLatency(s string) (float64, error) {
	s = strings.TrimSpace(s)
	for _, u := range latencyUnits {
		if num, ok := strings.CutSuffix(s, u.suffix); ok && num != "" {
			v, err := number(num)
			if err != nil {
				return 0, fmt.Errorf("latency %q: %v", s, err)
			}
			return v * u.ms, nil
		}
	}
	if _, err := number(s); err == nil {
		return 0, fmt.Errorf("latency %q needs a unit: ns, us, ms, s or m (e.g. %sms)", s, s)
	}
	return 0, fmt.Errorf("latency %q: a number with a unit expected (500us, 250ms, 1s)", s)
}

// units are the words that may follow a value after a space.
var units = map[string]bool{"ns": true, "us": true, "µs": true, "ms": true, "s": true, "m": true, "%": true, "/s": true, "ops/s": true}

// parseErrors parses "1%" (a rate) or "10" (a count).
func parseErrors(s string) (string, float64, error) {
	s = strings.TrimSpace(s)
	if num, ok := strings.CutSuffix(s, "%"); ok {
		v, err := number(num)
		if err != nil {
			return "", 0, fmt.Errorf("error rate %q: %v", s, err)
		}
		if v > 100 {
			return "", 0, fmt.Errorf("error rate %q is above 100%%", s)
		}
		return ErrorRate, v / 100, nil
	}
	v, err := number(s)
	if err != nil {
		return "", 0, fmt.Errorf("errors %q: a percentage (1%%) or a count (0) expected", s)
	}
	return ErrorCount, v, nil
}

// parseThroughput parses "1000/s", "1000 ops/s" or "1000".
func parseThroughput(s string) (float64, error) {
	num := strings.TrimSpace(s)
	for _, suf := range []string{"ops/s", "/s"} {
		if n, ok := strings.CutSuffix(num, suf); ok {
			num = strings.TrimSpace(n)
			break
		}
	}
	v, err := number(num)
	if err != nil {
		return 0, fmt.Errorf("throughput %q: operations per second expected (1000/s)", s)
	}
	return v, nil
}

// ParseList parses objectives; each element may hold several separated by
// commas. Every bad one is reported.
func ParseList(specs []string) ([]Expr, error) {
	var out []Expr
	var errs []error
	for _, s := range specs {
		for _, part := range strings.Split(s, ",") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			e, err := Parse(part)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, e)
		}
	}
	return out, errors.Join(errs...)
}

// String formats the objective canonically.
func (e Expr) String() string { return e.Text }

// Outcome is the result of checking one objective (results.SLOOutcome,
// the form run.json and experiment.json record).
type Outcome = results.SLOOutcome

// The details of outcomes whose figure is undefined for want of samples.
const (
	tooFewDetail = "(too few samples)"
	noOpDetail   = "no operation ran"
)

// TooFewSamples reports whether an outcome failed only because the
// figures had too few samples to define its metric (or no operation ran),
// not because a figure broke the objective.
func TooFewSamples(o Outcome) bool {
	return !o.Pass && o.Value == nil && o.Metric != "" && (strings.HasSuffix(o.Detail, tooFewDetail) || o.Detail == noOpDetail)
}

// Eval checks the objective against a table. A latency objective without
// an operation is checked against every operation. An undefined figure
// fails (the gate cannot vouch for it), as does an operation that did not
// run.
func (e Expr) Eval(t Table) []Outcome {
	ops := []string{e.Op}
	switch {
	case e.Op != "":
	case IsLatency(e.Metric):
		ops = t.Ops()
		if len(ops) == 0 {
			return []Outcome{{SLO: e.Text, Metric: e.Metric, Limit: e.Limit, Detail: noOpDetail}}
		}
	default:
		ops = []string{AllOps}
	}
	var out []Outcome
	for _, op := range ops {
		o := Outcome{SLO: e.Text, Op: op, Metric: e.Metric, Limit: e.Limit}
		f, ok := t[op]
		if !ok {
			o.Detail = fmt.Sprintf("operation %q did not run", op)
			if n := setting.Nearest(op, t.Ops()); n != "" {
				o.Detail += fmt.Sprintf(" (did you mean %q?)", n)
			} else if ops := t.Ops(); len(ops) > 0 {
				o.Detail += "; operations: " + strings.Join(ops, ", ")
			}
			out = append(out, o)
			continue
		}
		v, ok := f[e.Metric]
		if !ok {
			o.Detail = fmt.Sprintf("%s of %s is undefined %s", e.Metric, op, tooFewDetail)
			out = append(out, o)
			continue
		}
		o.Value = &v
		o.Pass = e.Cmp.holds(v, e.Limit)
		rel := string(e.Cmp)
		if !o.Pass {
			rel = "not " + rel
		}
		o.Detail = fmt.Sprintf("%s of %s: %s %s %s", metricLabel(e.Metric), op, Format(e.Metric, v), rel, Format(e.Metric, e.Limit))
		out = append(out, o)
	}
	return out
}

func metricLabel(m string) string {
	switch m {
	case ErrorRate:
		return "error rate"
	case ErrorCount:
		return "errors"
	case P999:
		return "p99.9"
	}
	return m
}

// Format formats a figure in its unit.
func Format(metric string, v float64) string {
	switch {
	case IsLatency(metric):
		switch {
		case v >= 1000:
			return strconv.FormatFloat(v/1000, 'g', 4, 64) + "s"
		case v >= 1:
			return strconv.FormatFloat(v, 'g', 4, 64) + "ms"
		}
		return strconv.FormatFloat(v*1000, 'g', 4, 64) + "us"
	case metric == ErrorRate:
		return strconv.FormatFloat(v*100, 'g', 4, 64) + "%"
	case metric == Throughput:
		return strconv.FormatFloat(v, 'f', 1, 64) + "/s"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Check evaluates every objective; ok is true when all outcomes pass.
func Check(exprs []Expr, t Table) (outcomes []Outcome, ok bool) {
	ok = true
	for _, e := range exprs {
		for _, o := range e.Eval(t) {
			outcomes = append(outcomes, o)
			ok = ok && o.Pass
		}
	}
	return outcomes, ok
}

// Failures checks objectives against a run.json document and returns a
// message per failed outcome, as run.json's "failures" holds them. It is
// the hook `scalelab run --slo` uses.
func Failures(specs []string, r *results.Run) ([]string, error) {
	exprs, err := ParseList(specs)
	if err != nil {
		return nil, err
	}
	outcomes, _ := Check(exprs, FromRun(r))
	var out []string
	for _, o := range outcomes {
		if !o.Pass {
			out = append(out, fmt.Sprintf("SLO %s: %s", o.SLO, o.Detail))
		}
	}
	return out, nil
}
