// Package cgroup confines a process and its children in a cgroup with CPU,
// memory and CPU-set limits, on cgroup v2 where its controllers are
// available and on cgroup v1 otherwise, and reads the group's usage back.
package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// System is the cgroup hierarchy this machine offers for limits.
type System struct {
	// Version is 1 or 2.
	Version int
	// roots maps a controller (v1: cpu, cpuacct, memory, cpuset) to its
	// mount point; v2 has one root under "".
	roots map[string]string
}

// Detect finds the hierarchy from /proc/self/mountinfo: cgroup v2 when a
// cgroup2 mount offers the cpu and memory controllers, else the v1 cpu,
// cpuacct and memory controllers.
func Detect() (*System, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("cgroup: read mountinfo: %w", err)
	}
	return detectFrom(b)
}

// detectFrom parses a mountinfo text.
func detectFrom(mountinfo []byte) (*System, error) {
	v1 := map[string]string{}
	var v2 []string
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 {
			continue
		}
		mnt := unescape(pf[4])
		switch qf[0] {
		case "cgroup2":
			v2 = append(v2, mnt)
		case "cgroup":
			for _, o := range strings.Split(qf[2], ",") {
				switch o {
				case "cpu", "cpuacct", "memory", "cpuset":
					v1[o] = mnt
				}
			}
		}
	}
	var missing []string
	for _, m := range v2 {
		b, err := os.ReadFile(filepath.Join(m, "cgroup.controllers"))
		if err != nil {
			continue
		}
		have := strings.Fields(string(b))
		if contains(have, "cpu") && contains(have, "memory") {
			return &System{Version: 2, roots: map[string]string{"": m}}, nil
		}
		missing = append(missing, fmt.Sprintf("the cgroup v2 hierarchy at %s offers %q, without cpu or memory", m, strings.Join(have, " ")))
	}
	if v1["cpu"] != "" && v1["cpuacct"] != "" && v1["memory"] != "" {
		return &System{Version: 1, roots: v1}, nil
	}
	if len(v1) > 0 {
		missing = append(missing, "the cgroup v1 cpu, cpuacct and memory controllers are not all mounted")
	}
	if len(missing) == 0 {
		missing = append(missing, "no cgroup hierarchy is mounted")
	}
	return nil, fmt.Errorf("no cgroup with CPU and memory controllers: %s; enable the cpu and memory controllers of cgroup v2 (or mount the v1 cpu, cpuacct and memory controllers), or run without --cpus/--memory/--cpuset",
		strings.Join(missing, "; "))
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Group is one node's cgroup: a path such as "scalelab/c1/node1" below
// each controller's root.
type Group struct {
	Path    string
	Version int
	dirs    map[string]string // controller ("" on v2) -> directory
}

// Open finds an existing group by its recorded path.
func Open(path string) (*Group, error) {
	sys, err := Detect()
	if err != nil {
		return nil, err
	}
	return sys.open(path)
}

func (s *System) open(path string) (*Group, error) {
	g := s.group(path)
	for c, d := range g.dirs {
		if _, err := os.Stat(d); err != nil {
			if c == "cpuset" {
				delete(g.dirs, c) // a group without pinning has none
				continue
			}
			return nil, fmt.Errorf("cgroup %s: %w", path, err)
		}
	}
	return g, nil
}

// group is path's directories, without touching the file system.
func (s *System) group(path string) *Group {
	g := &Group{Path: path, Version: s.Version, dirs: map[string]string{}}
	for c, root := range s.roots {
		g.dirs[c] = filepath.Join(root, filepath.FromSlash(path))
	}
	return g
}

// Create makes path's group with limits l and returns it; on error it
// removes what it made.
func (s *System) Create(path string, l Limits) (*Group, error) {
	if path == "" || strings.Contains(path, "..") || strings.ContainsAny(path, "'\n") || filepath.IsAbs(path) {
		return nil, fmt.Errorf("cgroup: bad path %q", path)
	}
	g := s.group(path)
	var err error
	if s.Version == 2 {
		err = g.createV2(s.roots[""], l)
	} else {
		if l.CPUSet == "" {
			delete(g.dirs, "cpuset")
		}
		err = g.createV1(s.roots, l)
	}
	if err != nil {
		_ = g.Remove()
		return nil, permission(path, err)
	}
	return g, nil
}

// permission explains a refusal to write the hierarchy.
func permission(path string, err error) error {
	if errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EPERM) {
		return fmt.Errorf("cgroup %s: %w: limits need write access to the cgroup hierarchy: run as root, or delegate a cgroup v2 subtree to this user", path, err)
	}
	return fmt.Errorf("cgroup %s: %w", path, err)
}

// write writes one control file.
func write(dir, file, value string) error {
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644); err != nil {
		return fmt.Errorf("write %s = %s: %w", file, strings.TrimSpace(value), err)
	}
	return nil
}

// Wrap returns a command that joins the group, then runs cmd in its
// place, so that every process cmd forks is inside from its start.
func (g *Group) Wrap(cmd []string) []string {
	var b strings.Builder
	for _, d := range g.sortedDirs() {
		fmt.Fprintf(&b, "echo $$ > '%s/cgroup.procs' && ", d)
	}
	b.WriteString(`exec "$@"`)
	return append([]string{"/bin/sh", "-c", b.String(), "sh"}, cmd...)
}

// sortedDirs is the group's directories in a stable order.
func (g *Group) sortedDirs() []string {
	var out []string
	for _, c := range []string{"", "cpu", "cpuacct", "memory", "cpuset"} {
		if d, ok := g.dirs[c]; ok {
			out = append(out, d)
		}
	}
	return out
}

// Usage is a group's consumption so far.
type Usage struct {
	CPUNanos         uint64 // CPU time of every process in it
	MemoryBytes      int64  // memory in use now
	Periods          uint64 // CFS enforcement periods
	ThrottledPeriods uint64 // periods in which it was throttled
	ThrottledNanos   uint64
}

// Usage reads the group's usage.
func (g *Group) Usage() (Usage, error) {
	if g.Version == 2 {
		return g.usageV2()
	}
	return g.usageV1()
}

// Limits reads back the limits in force.
func (g *Group) Limits() Limits {
	if g.Version == 2 {
		return g.limitsV2()
	}
	return g.limitsV1()
}

// Remove removes the group's directories and then its empty parents up to
// the first element of its path. A directory that still holds processes
// is an error naming it.
func (g *Group) Remove() error {
	var errs []error
	parts := strings.Split(g.Path, "/")
	for _, d := range g.sortedDirs() {
		for i := 0; i < len(parts); i++ {
			err := os.Remove(d)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				if i == 0 {
					errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
				}
				break // a parent still used by another group
			}
			d = filepath.Dir(d)
		}
	}
	return errors.Join(errs...)
}

// readUint reads a file holding one number.
func readUint(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}

// readKV reads a "key value" file such as cpu.stat.
func readKV(path string) (map[string]uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			out[k] = n
		}
	}
	return out, nil
}

// Procs lists the processes in the group now.
func (g *Group) Procs() ([]int, error) {
	var pids []int
	for _, d := range g.sortedDirs() {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("cgroup %s: %w", g.Path, err)
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids, nil
}

// Empty waits until no process is left in the group (the threads of a
// stopped server can outlive its main thread by a moment), sends SIGKILL
// to whatever is left after grace, and waits as long again.
func (g *Group) Empty(grace time.Duration) error {
	wait := func(d time.Duration) ([]int, error) {
		for end := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
			pids, err := g.Procs()
			if err != nil || len(pids) == 0 || time.Now().After(end) {
				return pids, err
			}
		}
	}
	pids, err := wait(grace)
	if err != nil || len(pids) == 0 {
		return err
	}
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	if pids, err = wait(grace); err == nil && len(pids) > 0 {
		return fmt.Errorf("cgroup %s: processes %v survived SIGKILL", g.Path, pids)
	}
	return err
}
