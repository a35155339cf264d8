package jvm

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/setting"
)

// heapRE is a JVM heap size as --heap takes it.
var heapRE = regexp.MustCompile(`^[1-9][0-9]*[mMgG]$`)

// The options every JVM node takes besides cluster's nodes and
// exit_with_pid.
const (
	OptJVMOptions = "jvm_options"
)

// HeapOption declares the heap option (--heap): def unless given, a size
// the JVM takes (-Xms and -Xmx).
func HeapOption(def string) setting.Spec {
	return setting.Spec{Key: cluster.OptHeap, Kind: setting.String, Default: def,
		Description: "JVM heap per node, -Xms and -Xmx: a size such as 512m or 1g",
		Check: func(v setting.Value) error {
			if !heapRE.MatchString(v.String()) {
				return errors.New("give a size such as 512m or 1g")
			}
			return nil
		}}
}

// NodeOptionSpecs declare the options every JVM node takes: the heap (def
// unless given), extra JVM flags and exit_with_pid.
func NodeOptionSpecs(def string) []setting.Spec {
	return []setting.Spec{HeapOption(def),
		{Key: OptJVMOptions, Kind: setting.String, Default: "",
			Description: "extra JVM flags for every node, space-separated, e.g. \"-XX:+UseG1GC -Dfoo=1\"",
			Check: func(v setting.Value) error {
				for _, f := range strings.Fields(v.String()) {
					if !strings.HasPrefix(f, "-") {
						return fmt.Errorf("%q is not a JVM flag", f)
					}
				}
				return nil
			}},
		cluster.ExitWithPIDOption(),
	}
}

// NodeOptions are the options every JVM node takes.
type NodeOptions struct {
	// Heap is -Xms and -Xmx of each node.
	Heap string
	// ExitWithPID makes the node's watchdog stop it when that process
	// exits (a test binary's nodes); 0: none.
	ExitWithPID int
	// JVMFlags are extra JVM flags (jvm_options).
	JVMFlags []string
}

// NodeOptionsOf reads the options NodeOptionSpecs declares from a
// cluster's resolved options.
func NodeOptionsOf(r *cluster.Resolved) NodeOptions {
	return NodeOptions{Heap: r.Get(cluster.OptHeap).String(), ExitWithPID: int(r.Get(cluster.OptExitWithPID).Int()),
		JVMFlags: strings.Fields(r.Get(OptJVMOptions).String())}
}

// Command starts a node's command line: the java binary, the heap, then
// the flags of each group in order, then the extra flags of o.
func (o *NodeOptions) Command(java string, flags ...[]string) []string {
	cmd := []string{java, "-Xms" + o.Heap, "-Xmx" + o.Heap}
	for _, f := range flags {
		cmd = append(cmd, f...)
	}
	return append(cmd, o.JVMFlags...)
}

// Record writes the options and the JVM into a cluster's params: heap,
// java (its binary and version) and jvm_options when there are some.
func (o *NodeOptions) Record(params map[string]string, java string, version int) {
	params[cluster.OptHeap] = o.Heap
	params["java"] = fmt.Sprintf("%s (Java %d)", java, version)
	if len(o.JVMFlags) > 0 {
		params[OptJVMOptions] = strings.Join(o.JVMFlags, " ")
	}
}
