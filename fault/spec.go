// Package fault injects faults into a scalelab-managed local cluster during
// a run and records what happened: it parses and validates fault specs
// (`kill:node2@60s`, `stop:node2@60s+30s`, `restart:node2@60s`), executes
// them on schedule (SIGKILL; SIGSTOP then SIGCONT; TERM, grace, KILL and a
// start again with the node's recorded command), watches the cluster's
// processes and its engine's health while the run goes on, and waits after
// the load for the cluster to be healthy again. Times count from the start
// of the load (t = 0 of series.csv and of the report's time charts, warm-up
// included). See docs/faults.md.
package fault

import (
	"fmt"
	"strings"
	"time"

	"github.com/scalelab/scalelab/cluster"
)

// Kind is what a fault does to a node.
type Kind string

// Fault kinds.
const (
	Kill    Kind = "kill"    // SIGKILL the node's process group; it stays down
	Stop    Kind = "stop"    // SIGSTOP, then SIGCONT after the duration: a hung node
	Restart Kind = "restart" // TERM, grace period, KILL, then start it again
	// Partition takes the node's network link down for the duration (a
	// cluster started with --netns): it reaches no one, no one reaches it.
	Partition Kind = "partition"
)

// Kinds lists the fault kinds.
var Kinds = []Kind{Kill, Stop, Restart, Partition}

// Grammar describes a fault spec for error messages and help.
const Grammar = "KIND:NODE@TIME[+DURATION], KIND one of kill, stop, restart, partition; NODE a node of the --cluster (node1, node2, ...); TIME since the start of the load as a Go duration (90s, 1m30s); +DURATION only and always for stop (how long the node hangs) and partition (how long its link is down; clusters started with --netns), e.g. kill:node2@60s, stop:node2@60s+30s, restart:node3@1m, partition:node2@30s+15s"

// Spec is one parsed fault.
type Spec struct {
	Text string        // as given
	Kind Kind          // what to do
	Node string        // node name in the cluster state
	At   time.Duration // since the start of the load
	For  time.Duration // stop: how long the node stays stopped
}

// String is the canonical form, e.g. "stop:node2@1m0s+30s".
func (s Spec) String() string {
	t := fmt.Sprintf("%s:%s@%s", s.Kind, s.Node, s.At)
	if s.Kind == Stop || s.Kind == Partition {
		t += "+" + s.For.String()
	}
	return t
}

// Parse reads one fault spec; an error names what was wrong and gives the
// grammar.
func Parse(text string) (Spec, error) {
	s := Spec{Text: text}
	bad := func(format string, a ...any) (Spec, error) {
		return Spec{}, fmt.Errorf("fault %q: %s; the form is %s", text, fmt.Sprintf(format, a...), Grammar)
	}
	kind, rest, ok := strings.Cut(strings.TrimSpace(text), ":")
	if !ok {
		return bad("no ':' after the kind")
	}
	s.Kind = Kind(strings.ToLower(strings.TrimSpace(kind)))
	known := false
	for _, k := range Kinds {
		known = known || k == s.Kind
	}
	if !known {
		return bad("unknown kind %q (allowed: kill, stop, restart)", kind)
	}
	node, when, ok := strings.Cut(rest, "@")
	if !ok {
		return bad("no '@TIME' after the node")
	}
	s.Node = strings.TrimSpace(node)
	if s.Node == "" {
		return bad("no node name")
	}
	at, dur, hasDur := strings.Cut(when, "+")
	var err error
	if s.At, err = time.ParseDuration(strings.TrimSpace(at)); err != nil {
		return bad("time %q is not a duration such as 60s or 1m30s", at)
	}
	if s.At < 0 {
		return bad("time %s is negative", s.At)
	}
	switch {
	case s.Kind == Stop && !hasDur:
		return bad("stop needs +DURATION, how long the node hangs (e.g. stop:%s@%s+30s)", s.Node, s.At)
	case s.Kind == Partition && !hasDur:
		return bad("partition needs +DURATION, how long the node's link is down (e.g. partition:%s@%s+15s)", s.Node, s.At)
	case s.Kind != Stop && s.Kind != Partition && hasDur:
		return bad("+DURATION is only for stop and partition; %s takes none", s.Kind)
	case hasDur:
		if s.For, err = time.ParseDuration(strings.TrimSpace(dur)); err != nil {
			return bad("duration %q is not a duration such as 30s", dur)
		}
		if s.For <= 0 {
			return bad("duration %s must be positive", s.For)
		}
	}
	return s, nil
}

// ParseList parses several specs. A single text may also hold several
// specs separated by commas (the form of an experiment factor's level).
func ParseList(texts []string) ([]Spec, error) {
	var out []Spec
	for _, t := range texts {
		for _, part := range strings.Split(t, ",") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			s, err := Parse(part)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// Validate checks specs against the cluster and the run: every node must
// exist in st (the error lists the cluster's nodes) and every fault must
// fall inside the run (runFor, 0 when only an operation budget bounds the
// run and the check cannot be made).
func Validate(specs []Spec, st *cluster.State, runFor time.Duration) error {
	if len(specs) == 0 {
		return nil
	}
	if st == nil {
		return fmt.Errorf("--fault %s: faults need a scalelab-managed cluster given with --cluster NAME (see `scalelab cluster up`)", specs[0].Text)
	}
	names := make([]string, len(st.Nodes))
	for i, n := range st.Nodes {
		names[i] = n.Name
	}
	for _, s := range specs {
		found := false
		for _, n := range names {
			found = found || n == s.Node
		}
		if !found {
			return fmt.Errorf("--fault %s: cluster %s has no node %q; its nodes: %s", s.Text, st.Name, s.Node, strings.Join(names, ", "))
		}
		if s.Kind == Partition && st.Net == nil {
			return fmt.Errorf("--fault %s: cluster %s shares the host's loopback, so no partition can happen on it; start it with `scalelab cluster up ... --netns` (each node in its own network namespace)", s.Text, st.Name)
		}
		if runFor > 0 && s.At >= runFor {
			return fmt.Errorf("--fault %s: time %s is not before the end of the %s run (times count from the start of the load, warm-up included)", s.Text, s.At, runFor)
		}
	}
	return nil
}
