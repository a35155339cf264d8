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

// TestRecord writes the heap, the JVM and the extra flags, these only
// when there are some.
func TestRecord(t *testing.T) {
	t.Parallel()
	p := map[string]string{}
	(&NodeOptions{Heap: "512m"}).Record(p, "/jdk/bin/java", 21)
	if len(p) != 2 || p["heap"] != "512m" || p["java"] != "/jdk/bin/java (Java 21)" {
		t.Errorf("without flags: %v", p)
	}
	(&NodeOptions{Heap: "1g", JVMFlags: []string{"-XX:+UseG1GC", "-Da=1"}}).Record(p, "java", 17)
	if p["heap"] != "1g" || p["java"] != "java (Java 17)" || p["jvm_options"] != "-XX:+UseG1GC -Da=1" {
		t.Errorf("with flags: %v", p)
	}
}
