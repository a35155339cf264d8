package fault

import (
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/cluster/netns"
)

func TestParse(t *testing.T) {
	t.Parallel()
	good := []struct {
		in   string
		want Spec
	}{
		{"kill:node2@60s", Spec{Kind: Kill, Node: "node2", At: 60 * time.Second}},
		{"stop:node2@60s+30s", Spec{Kind: Stop, Node: "node2", At: 60 * time.Second, For: 30 * time.Second}},
		{"restart:node3@1m30s", Spec{Kind: Restart, Node: "node3", At: 90 * time.Second}},
		{" KILL:node1@0s ", Spec{Kind: Kill, Node: "node1"}},
		{"partition:node2@30s+15s", Spec{Kind: Partition, Node: "node2", At: 30 * time.Second, For: 15 * time.Second}},
		{"partition:node1|node2,node3@30s+20s", Spec{Kind: Partition, Node: "node1", At: 30 * time.Second, For: 20 * time.Second,
			A: []string{"node1"}, B: []string{"node2", "node3"}}},
		{"delay:node2=200ms@30s+20s", Spec{Kind: Delay, Node: "node2", At: 30 * time.Second, For: 20 * time.Second, Delay: 200 * time.Millisecond}},
		{"loss:node3=10%@30s+20s", Spec{Kind: Loss, Node: "node3", At: 30 * time.Second, For: 20 * time.Second, LossPct: 10}},
		{"loss:node3=0.5@1s+1s", Spec{Kind: Loss, Node: "node3", At: time.Second, For: time.Second, LossPct: 0.5}},
	}
	for _, g := range good {
		s, err := Parse(g.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", g.in, err)
			continue
		}
		if s.Kind != g.want.Kind || s.Node != g.want.Node || s.At != g.want.At || s.For != g.want.For || s.Text != g.in ||
			s.Delay != g.want.Delay || s.LossPct != g.want.LossPct || strings.Join(s.A, ",") != strings.Join(g.want.A, ",") || strings.Join(s.B, ",") != strings.Join(g.want.B, ",") {
			t.Errorf("Parse(%q) = %+v, want %+v", g.in, s, g.want)
		}
	}
	bad := []struct{ in, says string }{
		{"kill", "no ':'"},
		{"crash:node2@1s", `unknown kind "crash"`},
		{"kill:node2", "no '@TIME'"},
		{"kill:@1s", "no node name"},
		{"kill:node2@soon", `"soon" is not a duration`},
		{"kill:node2@-1s", "negative"},
		{"stop:node2@1s", "stop needs +DURATION"},
		{"kill:node2@1s+2s", "only for stop"},
		{"stop:node2@1s+0s", "must be positive"},
		{"stop:node2@1s+x", `"x" is not a duration`},
		{"delay:node2@1s+1s", "delay needs a value"},
		{"delay:node2=0.5ms@1s+1s", "whole number of milliseconds"},
		{"delay:node2=200ms@1s", "delay needs +DURATION"},
		{"loss:node2=0%@1s+1s", "above 0"},
		{"loss:node2=150%@1s+1s", "at most 100"},
		{"kill:node2=1@1s", "only for delay and loss"},
		{"kill:node1|node2@1s", "only for partition"},
		{"partition:node1|@1s+1s", "both sides"},
		{"partition:node1|node1,node2@1s+1s", "both sides of '|'"},
	}
	for _, b := range bad {
		_, err := Parse(b.in)
		if err == nil || !strings.Contains(err.Error(), b.says) || !strings.Contains(err.Error(), "KIND:NODE@TIME") {
			t.Errorf("Parse(%q) error %v, want one saying %q with the grammar", b.in, err, b.says)
		}
	}
}

func TestParseList(t *testing.T) {
	t.Parallel()
	specs, err := ParseList([]string{"kill:node2@5s,stop:node3@6s+1s", "restart:node1@7s"})
	if err != nil || len(specs) != 3 || specs[1].Kind != Stop || specs[2].Node != "node1" {
		t.Fatalf("ParseList = %+v, %v", specs, err)
	}
	if specs[1].String() != "stop:node3@6s+1s" {
		t.Errorf("String() = %q", specs[1].String())
	}
	// a comma inside a partition's group stays in its spec
	specs, err = ParseList([]string{"partition:node1|node2,node3@5s+2s,delay:node2=20ms@8s+1s,loss:node1=1%@9s+1s"})
	if err != nil || len(specs) != 3 {
		t.Fatalf("ParseList with groups = %+v, %v", specs, err)
	}
	for i, want := range []string{"partition:node1|node2,node3@5s+2s", "delay:node2=20ms@8s+1s", "loss:node1=1%@9s+1s"} {
		if specs[i].String() != want {
			t.Errorf("spec %d String() = %q, want %q", i, specs[i].String(), want)
		}
	}
	if _, err := ParseList([]string{"kill:node2@5s,bad"}); err == nil {
		t.Error("ParseList accepted a bad element")
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	st := &cluster.State{Name: "c1", Nodes: []cluster.Node{{Name: "node1"}, {Name: "node2"}, {Name: "node3"}}}
	withNet := &cluster.State{Name: "c2", Nodes: st.Nodes, Net: &netns.Topology{}}
	withLinks := &cluster.State{Name: "c3", Nodes: st.Nodes, Net: &netns.Topology{}, Links: &cluster.Links{Proxied: true}}
	spec := func(s string) []Spec {
		sp, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return []Spec{sp}
	}
	cases := []struct {
		specs  []Spec
		st     *cluster.State
		runFor time.Duration
		says   string
	}{
		{spec("kill:node2@5s"), st, 10 * time.Second, ""},
		{spec("kill:node2@5s"), st, 0, ""}, // --ops only: no time check
		{nil, nil, 0, ""},
		{spec("kill:node2@5s"), nil, 10 * time.Second, "--cluster"},
		{spec("kill:node9@5s"), st, 10 * time.Second, "its nodes: node1, node2, node3"},
		{spec("kill:node2@10s"), st, 10 * time.Second, "not before the end of the 10s run"},
		{spec("partition:node2@1s+1s"), st, 10 * time.Second, "--netns"},
		{spec("delay:node2=20ms@1s+1s"), st, 10 * time.Second, "--netns"},
		{spec("loss:node2=1%@1s+1s"), st, 10 * time.Second, "--netns"},
		{spec("delay:node2=20ms@1s+1s"), withNet, 10 * time.Second, "--link delay=0ms"},
		{spec("delay:node2=20ms@1s+1s"), withLinks, 10 * time.Second, ""},
		{spec("partition:node1|node2,node9@1s+1s"), withNet, 10 * time.Second, `no node "node9"`},
	}
	for _, c := range cases {
		err := Validate(c.specs, c.st, c.runFor)
		if c.says == "" && err != nil {
			t.Errorf("Validate(%v): %v", c.specs, err)
		}
		if c.says != "" && (err == nil || !strings.Contains(err.Error(), c.says)) {
			t.Errorf("Validate(%v) = %v, want an error saying %q", c.specs, err, c.says)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"kill:node2@60s", "stop:node2@60s+30s", "restart:n@1m", "x:y@z+w",
		"partition:a|b,c@1s+2s", "delay:node2=200ms@30s+20s", "loss:node3=12.5%@1s+1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(in)
		if err != nil {
			return
		}
		again, err := Parse(s.String())
		if err != nil || again.Kind != s.Kind || again.Node != s.Node || again.At != s.At || again.For != s.For ||
			again.Delay != s.Delay || again.LossPct != s.LossPct || again.Target() != s.Target() {
			t.Fatalf("%q parsed to %+v, whose String %q parses to %+v, %v", in, s, s.String(), again, err)
		}
	})
}
