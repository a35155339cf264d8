package runner

import (
	"fmt"
	"io"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/results"
)

// checkRunning checks that the processes of the cluster nodes the run
// needs are alive (the app cluster's, the store's and each tier's), so
// that a node killed outside scalelab stops the run before anything
// starts (exit code 4) with a message naming it, instead of a client's
// timeout or "connection refused" later. Dead nodes the run can do
// without become warnings.
func (p *Plan) checkRunning() error {
	p.warnings = nil
	type named struct {
		flag string
		st   *cluster.State
	}
	var all []named
	if p.app != nil {
		all = append(all, named{"--cluster", p.app})
		if p.cluster != nil {
			all = append(all, named{fmt.Sprintf("--cluster %s (its store)", p.app.Name), p.cluster})
		}
	} else if p.cluster != nil {
		all = append(all, named{"--cluster", p.cluster})
	}
	for _, t := range p.tiers {
		if t.cluster != nil {
			all = append(all, named{"--" + t.role + "-cluster", t.cluster})
		}
	}
	for _, c := range all {
		w, err := c.st.CheckRunning()
		if err != nil {
			return results.WithCode(results.ExitUnfinished, fmt.Errorf("%s: %w", c.flag, err))
		}
		if w != "" {
			p.warnings = append(p.warnings, w)
		}
	}
	return nil
}

// warnDeadNodes puts the warnings of checkRunning into run.json and on
// the terminal.
func (p *Plan) warnDeadNodes(doc *results.Run, stderr io.Writer) {
	for _, w := range p.warnings {
		doc.Warnings = append(doc.Warnings, w)
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
}
