package jvm

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/cluster"
)

// nodes is a provisioner that declares the JVM node options only.
type nodes struct{}

func (nodes) Engine() string { return "jvmnodes" }
func (nodes) Up(context.Context, cluster.Spec, *cluster.State) error {
	return errors.New("not started in tests")
}
func (nodes) Status(context.Context, *cluster.State) ([]cluster.NodeStatus, error) { return nil, nil }
func (nodes) Options() cluster.Options                                             { return cluster.Options{Specs: NodeOptionSpecs("512m")} }

func TestNodeOptions(t *testing.T) {
	r, err := cluster.Resolve(nodes{}, cluster.Spec{Heap: "1g", Options: map[string]string{OptJVMOptions: "-Xss1m  -Dx=1", cluster.OptExitWithPID: "42"}})
	if err != nil {
		t.Fatal(err)
	}
	no := NodeOptionsOf(r)
	if no.Heap != "1g" || no.ExitWithPID != 42 {
		t.Errorf("node options %+v", no)
	}
	if got, want := no.Command("java", []string{"-a"}, []string{"-b"}), []string{"java", "-Xms1g", "-Xmx1g", "-a", "-b", "-Xss1m", "-Dx=1"}; !slices.Equal(got, want) {
		t.Errorf("command %q, want %q", got, want)
	}
	r, err = cluster.Resolve(nodes{}, cluster.Spec{})
	if err != nil || NodeOptionsOf(r).Heap != "512m" || NodeOptionsOf(r).ExitWithPID != 0 || len(NodeOptionsOf(r).JVMFlags) != 0 {
		t.Errorf("defaults: %+v %v", NodeOptionsOf(r), err)
	}
	for _, bad := range []cluster.Spec{
		{Heap: "1gb"}, {Heap: "0m"},
		{Options: map[string]string{OptJVMOptions: "-Xss1m G1"}},
		{Options: map[string]string{cluster.OptExitWithPID: "-3"}},
	} {
		if _, err := cluster.Resolve(nodes{}, bad); err == nil || !errors.Is(err, cluster.ErrBadOption) || !strings.Contains(err.Error(), "allowed") && !strings.Contains(err.Error(), "give a size") && !strings.Contains(err.Error(), "not a JVM flag") {
			t.Errorf("%+v: %v, want a bad option saying what is allowed", bad, err)
		}
	}
}
