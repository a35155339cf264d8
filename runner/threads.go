package runner

import (
	"github.com/scalelab/scalelab/load"
	"github.com/scalelab/scalelab/scenario"
)

// threadsGiven reports whether the options name the threads model by its
// own flags (--ramp-up, --loops) or --model.
func threadsGiven(f *Options, given map[string]bool) bool {
	return f.Model == load.ModelThreads || given["ramp-up"] || given["loops"]
}

// threadsModel builds JMeter's thread group from the options: --users
// (default 8), --ramp-up (default 0: every user at once), --loops
// (default 1, as JMeter's, or 0 when --duration or --ops bound the run:
// loop until they end it) and --think.
func threadsModel(f *Options, given map[string]bool, think load.Think) *load.Threads {
	users := f.Users
	if !given["users"] {
		users = 8
	}
	loops := f.Loops
	if !given["loops"] {
		loops = 1
		if f.Duration > 0 || f.Ops > 0 {
			loops = 0
		}
	}
	return &load.Threads{Users: users, RampUp: f.RampUp, Loops: loops, Think: think}
}

// OneOpSessions passes the wrapped workload's answer through (see
// scenario.OneOpSessions): the threads model counts its loops by it.
func (w *auditWorkload) OneOpSessions() bool { return scenario.LoopIsOneOp(w.Workload) }
