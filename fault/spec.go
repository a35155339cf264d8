// Package fault injects faults into a scalelab-managed local cluster during
// a run and records what happened: it parses and validates fault specs
// (`kill:node2@60s`, `stop:node2@60s+30s`, `restart:node2@60s`, and on a
// cluster with its own network `partition:node2@30s+15s`,
// `partition:node1|node2,node3@30s+15s`, `delay:node2=200ms@30s+20s`,
// `loss:node3=10%@30s+20s`), executes them on schedule (SIGKILL; SIGSTOP
// then SIGCONT; TERM, grace, KILL and a start again with the node's
// recorded command; a link down, nftables rules, a link's delay or loss
// changed and put back), watches the cluster's
// processes and its engine's health while the run goes on, and waits after
// the load for the cluster to be healthy again. Times count from the start
// of the load (t = 0 of series.csv and of the report's time charts, warm-up
// included). See docs/faults.md.
package fault

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/cluster/netns"
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
	// With two groups (node1|node2,node3) it cuts each group from the
	// other instead, both still reaching the load generator.
	Partition Kind = "partition"
	// Delay gives the node's link a delay (one way) for the duration.
	Delay Kind = "delay"
	// Loss drops a share of the node's packets, each way, for the duration.
	Loss Kind = "loss"
)

// Kinds lists the fault kinds.
var Kinds = []Kind{Kill, Stop, Restart, Partition, Delay, Loss}

// Grammar describes a fault spec for error messages and help.
const Grammar = "KIND:NODE@TIME[+DURATION], KIND one of kill, stop, restart, partition, delay, loss; NODE a node of the --cluster (node1, node2, ...); " +
	"TIME since the start of the load as a Go duration (90s, 1m30s); +DURATION only and always for stop (how long the node hangs), partition, delay and loss (how long the network fault lasts; clusters started with --netns); " +
	"partition:A|B cuts the nodes of group A from those of group B (comma-separated), delay:NODE=200ms and loss:NODE=10% give the value; " +
	"e.g. kill:node2@60s, stop:node2@60s+30s, restart:node3@1m, partition:node2@30s+15s, partition:node1|node2,node3@30s+20s, delay:node2=200ms@30s+20s, loss:node3=10%@30s+20s"

// Spec is one parsed fault.
type Spec struct {
	Text string        // as given
	Kind Kind          // what to do
	Node string        // node name in the cluster state (a group partition: the first of group A)
	At   time.Duration // since the start of the load
	For  time.Duration // stop and network faults: how long they last
	// A and B are the groups of a partition between groups; nil for a
	// node's partition.
	A, B []string
	// Delay is a delay fault's one-way delay, LossPct a loss fault's share.
	Delay   time.Duration
	LossPct float64
}

// lasts reports whether the kind takes +DURATION.
func (k Kind) lasts() bool { return k == Stop || k == Partition || k == Delay || k == Loss }

// Target is what the fault acts on as written: a node, or A|B.
func (s Spec) Target() string {
	if s.A != nil {
		return strings.Join(s.A, ",") + "|" + strings.Join(s.B, ",")
	}
	return s.Node
}

// String is the canonical form, e.g. "stop:node2@1m0s+30s".
func (s Spec) String() string {
	t := string(s.Kind) + ":" + s.Target()
	switch s.Kind {
	case Delay:
		t += "=" + s.Delay.String()
	case Loss:
		t += "=" + strconv.FormatFloat(s.LossPct, 'g', -1, 64) + "%"
	}
	t += "@" + s.At.String()
	if s.Kind.lasts() {
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
	var names []string
	for _, k := range Kinds {
		known = known || k == s.Kind
		names = append(names, string(k))
	}
	if !known {
		return bad("unknown kind %q (allowed: %s)", kind, strings.Join(names, ", "))
	}
	node, when, ok := strings.Cut(rest, "@")
	if !ok {
		return bad("no '@TIME' after the node")
	}
	node, value, hasValue := strings.Cut(node, "=")
	s.Node = strings.TrimSpace(node)
	switch {
	case (s.Kind == Delay || s.Kind == Loss) && !hasValue:
		return bad("%s needs a value after the node (e.g. delay:node2=200ms, loss:node2=10%%)", s.Kind)
	case s.Kind != Delay && s.Kind != Loss && hasValue:
		return bad("'=VALUE' is only for delay and loss; %s takes none", s.Kind)
	case s.Kind == Delay:
		d, err := time.ParseDuration(strings.TrimSpace(value))
		if err != nil || d <= 0 || d%time.Millisecond != 0 {
			return bad("delay %q is not a positive whole number of milliseconds such as 200ms", value)
		}
		s.Delay = d
	case s.Kind == Loss:
		f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(value), "%"), 64)
		if err != nil || f <= 0 || f > 100 {
			return bad("loss %q is not a per cent above 0 and at most 100 such as 10%%", value)
		}
		s.LossPct = f
	}
	if a, b, isGroups := strings.Cut(s.Node, "|"); isGroups {
		if s.Kind != Partition {
			return bad("groups (A|B) are only for partition")
		}
		s.A, s.B = nodeList(a), nodeList(b)
		if len(s.A) == 0 || len(s.B) == 0 {
			return bad("a partition between groups names nodes on both sides of '|'")
		}
		for _, n := range s.A {
			for _, m := range s.B {
				if n == m {
					return bad("node %s is on both sides of '|'", n)
				}
			}
		}
		s.Node = s.A[0]
	}
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
	case s.Kind.lasts() && !hasDur:
		return bad("%s needs +DURATION, how long the network fault lasts (e.g. %s:%s@%s+15s)", s.Kind, s.Kind, s.Target(), s.At)
	case !s.Kind.lasts() && hasDur:
		return bad("+DURATION is only for stop, partition, delay and loss; %s takes none", s.Kind)
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

// nodeList splits a comma-separated group of nodes.
func nodeList(s string) []string {
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// ParseList parses several specs. A single text may also hold several
// specs separated by commas (the form of an experiment factor's level); a
// comma inside a partition's group (node1|node2,node3) stays in its spec.
func ParseList(texts []string) ([]Spec, error) {
	var out []Spec
	for _, t := range texts {
		var parts []string
		for _, part := range strings.Split(t, ",") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			if len(parts) > 0 && !startsWithKind(part) {
				parts[len(parts)-1] += "," + part
				continue
			}
			parts = append(parts, part)
		}
		for _, part := range parts {
			s, err := Parse(part)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// startsWithKind reports whether s begins with "KIND:".
func startsWithKind(s string) bool {
	k, _, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return false
	}
	for _, kind := range Kinds {
		if Kind(strings.ToLower(k)) == kind {
			return true
		}
	}
	return false
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
		return fmt.Errorf("--fault %s: faults need a scalelab-managed cluster given with --cluster NAME, or a cache tier's with --cache-cluster NAME in front of an embedded store (see `scalelab cluster up`)", specs[0].Text)
	}
	names := make([]string, len(st.Nodes))
	for i, n := range st.Nodes {
		names[i] = n.Name
	}
	for _, s := range specs {
		for _, node := range append(append([]string{s.Node}, s.A...), s.B...) {
			found := false
			for _, n := range names {
				found = found || n == node
			}
			if !found {
				return fmt.Errorf("--fault %s: cluster %s has no node %q; its nodes: %s", s.Text, st.Name, node, strings.Join(names, ", "))
			}
		}
		switch {
		case (s.Kind == Partition || s.Kind == Loss || s.Kind == Delay) && st.Net == nil:
			return fmt.Errorf("--fault %s: cluster %s shares the host's loopback, so no network fault can happen on it; start it with `scalelab cluster up ... --netns` (each node in its own network namespace)", s.Text, st.Name)
		case s.Kind == Delay && (st.Links == nil || !st.Links.Proxied):
			return fmt.Errorf("--fault %s: cluster %s has no delaying links (without sch_netem, delay is made by a proxy on each path); start it with `scalelab cluster up ... --netns --link delay=0ms` (or any delay)", s.Text, st.Name)
		case s.Kind == Loss || s.A != nil:
			if err := netns.CheckNft(); err != nil {
				return fmt.Errorf("--fault %s: %w", s.Text, err)
			}
		}
		if runFor > 0 && s.At >= runFor {
			return fmt.Errorf("--fault %s: time %s is not before the end of the %s run (times count from the start of the load, warm-up included)", s.Text, s.At, runFor)
		}
	}
	return nil
}
