package jvm

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// heapRE is a JVM heap size as --heap takes it.
var heapRE = regexp.MustCompile(`^[1-9][0-9]*[mMgG]$`)

// Heap returns the heap of a node: given, else def; a size that the JVM
// would not take is an error naming the form.
func Heap(given, def string) (string, error) {
	if given == "" {
		given = def
	}
	if !heapRE.MatchString(given) {
		return "", fmt.Errorf("--heap %q: give a size such as 512m or 1g", given)
	}
	return given, nil
}

// NodeOptions are the --opt options every JVM node takes.
type NodeOptions struct {
	// ExitWithPID makes the node's watchdog stop it when that process
	// exits (a test binary's nodes); 0: none.
	ExitWithPID int
	// JVMFlags are extra JVM flags (jvm_options).
	JVMFlags []string
}

// ParseOption parses the option k=v into o when it is one of the options
// every JVM node takes (exit_with_pid, jvm_options), and reports whether it
// was.
func (o *NodeOptions) ParseOption(k, v string) (bool, error) {
	switch k {
	case "exit_with_pid":
		pid, err := strconv.Atoi(v)
		if err != nil || pid <= 0 {
			return true, fmt.Errorf("--opt exit_with_pid=%q: a process id expected", v)
		}
		o.ExitWithPID = pid
	case "jvm_options":
		o.JVMFlags = strings.Fields(v)
		for _, f := range o.JVMFlags {
			if !strings.HasPrefix(f, "-") {
				return true, fmt.Errorf("--opt jvm_options=%q: %q is not a JVM flag", v, f)
			}
		}
	default:
		return false, nil
	}
	return true, nil
}

// Command starts a node's command line: the java binary, the heap, then
// the flags of each group in order, then the extra flags of o.
func (o *NodeOptions) Command(java, heap string, flags ...[]string) []string {
	cmd := []string{java, "-Xms" + heap, "-Xmx" + heap}
	for _, f := range flags {
		cmd = append(cmd, f...)
	}
	return append(cmd, o.JVMFlags...)
}

// ParseNodeOptions parses a cluster's --opt options: the ones every JVM
// node takes into the result, the others through extra, which reports
// whether it knows the key; an unknown key is an error naming what is
// allowed (the common options and extraKeys).
func ParseNodeOptions(opts map[string]string, engine string, extraKeys []string, extra func(k, v string) (bool, error)) (NodeOptions, error) {
	var no NodeOptions
	for k, v := range opts {
		if ok, err := no.ParseOption(k, v); ok {
			if err != nil {
				return no, err
			}
			continue
		}
		ok, err := extra(k, v)
		if err != nil {
			return no, err
		}
		if !ok {
			allowed := append([]string{"jvm_options", "exit_with_pid"}, extraKeys...)
			return no, fmt.Errorf("--opt %s: unknown option; %s clusters take %s", k, engine, strings.Join(allowed, ", "))
		}
	}
	return no, nil
}
