package results

import "fmt"

// Transactions is what every request of the run took, all operations
// together, over time: Tsung's "mean transaction duration" (the study's
// figure, which had no percentiles), second by second; and for a phases
// load the same phase by phase beside the percentiles, with the phase
// where the system broke.
type Transactions struct {
	Note string `json:"note"`
	// PerSecond is each 1 s interval of the load: the requests that ended
	// in it, succeeded or failed, and their mean duration.
	PerSecond []TxSecond `json:"per_second"`
	// Phases, Rule and Break are filled for a phases load.
	Phases []PhaseFigures `json:"phases,omitempty"`
	Rule   *BreakRule     `json:"break_rule,omitempty"`
	Break  *Break         `json:"break,omitempty"`
}

// TxSecond is one interval's requests.
type TxSecond struct {
	T      float64  `json:"t"` // the interval's end, seconds since the load began
	N      int64    `json:"n"` // requests that ended, errors included
	Errors int64    `json:"errors"`
	MeanMs *float64 `json:"mean_ms"` // null without a request
	Warmup bool     `json:"warmup,omitempty"`
}

// PhaseFigures is one phase's requests (those that ended inside it;
// the drain after the last phase counts in the last): how many, how many
// failed, their mean duration and percentiles, successes and failures
// together.
type PhaseFigures struct {
	Phase    string   `json:"phase"` // as --phases writes it: 30s@4/s
	FromS    float64  `json:"from_s"`
	ToS      float64  `json:"to_s"`
	Requests int64    `json:"requests"`
	Errors   int64    `json:"errors"`
	ErrorPct float64  `json:"error_pct"`
	PerS     float64  `json:"per_s"`
	MeanMs   *float64 `json:"mean_ms"`
	P50Ms    *float64 `json:"p50_ms"`
	P95Ms    *float64 `json:"p95_ms"`
	P99Ms    *float64 `json:"p99_ms"`
	MaxMs    *float64 `json:"max_ms"`
	// MeanFactor is the mean over the first phase's (null when either
	// has no request).
	MeanFactor *float64 `json:"mean_factor"`
}

// BreakRule says when a phase broke: more than ErrorPct per cent of its
// requests failed, or its mean duration passed MeanFactor times the
// first phase's.
type BreakRule struct {
	ErrorPct   float64 `json:"error_pct"`
	MeanFactor float64 `json:"mean_factor"`
}

// String words the rule.
func (r BreakRule) String() string {
	return fmt.Sprintf("errors over %g%% or a mean duration over %g times the first phase's", r.ErrorPct, r.MeanFactor)
}

// Break is the first phase that broke.
type Break struct {
	Index  int     `json:"index"` // 1 for the first phase
	Phase  string  `json:"phase"`
	FromS  float64 `json:"from_s"`
	Reason string  `json:"reason"`
}

// fewRequests is the size below which the first phase's mean, the
// baseline of a break, is said to rest on few requests.
const fewRequests = 30

// FindBreak returns the first phase that broke by rule (nil: none did),
// filling each phase's MeanFactor. A phase without requests neither
// breaks nor sets the baseline; the baseline is the first phase with
// requests.
func FindBreak(ps []PhaseFigures, rule BreakRule) *Break {
	var base float64
	var baseN int64
	for i := range ps {
		if p := &ps[i]; p.MeanMs != nil && p.Requests > 0 && base == 0 {
			base, baseN = *p.MeanMs, p.Requests
		}
	}
	few := "" // a baseline of a few requests is said, as it is noisy
	if baseN < fewRequests {
		few = fmt.Sprintf(", a mean of %d requests", baseN)
	}
	var b *Break
	for i := range ps {
		p := &ps[i]
		p.MeanFactor = nil
		if p.Requests == 0 {
			continue
		}
		if p.MeanMs != nil && base > 0 {
			f := *p.MeanMs / base
			p.MeanFactor = &f
		}
		if b != nil {
			continue
		}
		var why []string
		if p.ErrorPct > rule.ErrorPct {
			why = append(why, fmt.Sprintf("%.1f%% of its requests failed (over %g%%)", p.ErrorPct, rule.ErrorPct))
		}
		if p.MeanFactor != nil && *p.MeanFactor > rule.MeanFactor {
			why = append(why, fmt.Sprintf("its mean duration %.0f ms is %.1f times the first phase's %.1f ms (over %g%s)", *p.MeanMs, *p.MeanFactor, base, rule.MeanFactor, few))
		}
		if len(why) > 0 {
			reason := why[0]
			if len(why) == 2 {
				reason += " and " + why[1]
			}
			b = &Break{Index: i + 1, Phase: p.Phase, FromS: p.FromS, Reason: reason}
		}
	}
	return b
}
