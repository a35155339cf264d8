package cluster

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/setting"
)

// declaring is a provisioner that only declares options: a server with a
// memory size, a policy, a configuration file of free directives (some
// reserved) and --nodes up to 3.
type declaring struct{ free bool }

func (declaring) Engine() string                                       { return "kv" }
func (declaring) Up(context.Context, Spec, *State) error               { return errors.New("not started in tests") }
func (declaring) Status(context.Context, *State) ([]NodeStatus, error) { return nil, nil }

func (d declaring) Options() Options {
	o := Options{Specs: []setting.Spec{
		NodesOption(1, 3, "servers"),
		{Key: "maxmemory", Kind: setting.Size, Default: "0", Description: "memory for data"},
		{Key: "policy", Kind: setting.Enum, Default: "lru", Allowed: []string{"lru", "lfu", "none"}, Description: "what a full server does"},
		{Key: "tls", Kind: setting.Bool, Default: "off", Description: "TLS"},
		ExitWithPIDOption(),
	}}
	if d.free {
		o.Free = ConfigFree("kv.conf directives (hz=10)", regexp.MustCompile(`^[a-z][a-z0-9-]*$`).MatchString, []string{"bind", "port"}, "loopback only")
	}
	return o
}

func TestResolveDefaultsAndSpellings(t *testing.T) {
	r, err := Resolve(declaring{free: true}, Spec{Nodes: 3, Options: map[string]string{"maxmemory": "1gb", "zeta": "1", "hz": "10"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Get(OptNodes).Int() != 3 || !r.Given(OptNodes) || r.Get("maxmemory").Int() != 1<<30 || r.Get("policy").String() != "lru" || r.Given("policy") {
		t.Errorf("resolved: nodes %d maxmemory %d policy %q", r.Get(OptNodes).Int(), r.Get("maxmemory").Int(), r.Get("policy").String())
	}
	if len(r.Free) != 2 || r.Free[0] != [2]string{"hz", "10"} || r.Free[1] != [2]string{"zeta", "1"} {
		t.Errorf("free directives %v, want hz then zeta", r.Free)
	}
	r, err = Resolve(declaring{}, Spec{})
	if err != nil || r.Get(OptNodes).Int() != 1 || r.Get(OptExitWithPID).Int() != 0 || len(r.Free) != 0 {
		t.Errorf("defaults: %v %v", r, err)
	}
}

func TestResolveRefuses(t *testing.T) {
	for _, c := range []struct {
		free bool
		spec Spec
		want []string
	}{
		{false, Spec{Nodes: 4}, []string{"--nodes 4", `nodes="4": out of range; allowed: int in [1, 3]`}},
		{false, Spec{Replicas: 1}, []string{"--replicas 1", `kv clusters take no option "replicas"`, "they take: exit_with_pid, maxmemory, nodes, policy, tls", "scalelab list cluster kv"}},
		{false, Spec{Heap: "1g"}, []string{"--heap 1g", `no option "heap"`}},
		{false, Spec{Roles: []string{"cm", "data"}}, []string{"--roles cm,data", `no option "roles"`}},
		{false, Spec{Options: map[string]string{"maxmemroy": "1g"}}, []string{"--opt maxmemroy=1g", `(did you mean "maxmemory"?)`}},
		{false, Spec{Options: map[string]string{"policy": "lur"}}, []string{`policy="lur": not one of the allowed values (did you mean "lru"?); allowed: lru|lfu|none`}},
		{false, Spec{Options: map[string]string{"maxmemory": "lots"}}, []string{`maxmemory="lots"`, "not a size"}},
		{false, Spec{Options: map[string]string{"hz": "10"}}, []string{`no option "hz"`}}, // no free family
		{true, Spec{Options: map[string]string{"maxmemroy": "1g"}}, []string{`(did you mean "maxmemory"?)`, "and kv.conf directives (hz=10)"}},
		{true, Spec{Options: map[string]string{"tsl": "on"}}, []string{`(did you mean "tls"?)`}},
		{true, Spec{Options: map[string]string{"Bad Name": "1"}}, []string{`no option "Bad Name"`}},
		{true, Spec{Heap: "1g"}, []string{`no option "heap"`}},
		{true, Spec{Options: map[string]string{"replicas": "1"}}, []string{`no option "replicas"`}},
		{true, Spec{Options: map[string]string{"bind": "0.0.0.0"}}, []string{"scalelab sets bind itself (loopback only)"}},
		{true, Spec{Options: map[string]string{"hz": "10\nbind 0.0.0.0"}}, []string{"on several lines"}},
	} {
		_, err := Resolve(declaring{free: c.free}, c.spec)
		if err == nil || !errors.Is(err, ErrBadOption) {
			t.Errorf("%+v: %v, want an ErrBadOption", c.spec, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %q lacks %q", c.spec, err, w)
			}
		}
	}
}

func TestTypo(t *testing.T) {
	o := declaring{free: true}.Options()
	for key, want := range map[string]bool{"tsl": true, "tl": true, "maxmemroy": true, "maxmem": false, "hz": false, "appendfsync": false, "polcy": true, "policies": false, "nodes": true} {
		if got := o.typo(key); got != want {
			t.Errorf("typo(%q) = %t, want %t", key, got, want)
		}
	}
}

func TestDeclares(t *testing.T) {
	if !Declares(declaring{}, OptExitWithPID) || Declares(declaring{}, OptHeap) {
		t.Error("Declares: exit_with_pid is declared, heap is not")
	}
	if got := strings.Join(declaring{}.Options().Keys(), ","); got != "exit_with_pid,maxmemory,nodes,policy,tls" {
		t.Errorf("keys %s, want them sorted", got)
	}
}
