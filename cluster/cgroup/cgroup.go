// Package cgroup confines a process and its children in a cgroup with CPU,
// memory and CPU-set limits, on cgroup v2 where it offers the cpu and
// memory controllers and on cgroup v1 otherwise, and reads the group's
// usage back.
package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Group is one node's cgroup: a path such as "scalelab/c1/node1" below
// each controller's root.
type Group struct {
	// Path is the group's path below each controller's root, elements
	// separated by "/".
	Path string
	// Version is the cgroup version of the hierarchy it is in, 1 or 2.
	Version int
	// dirs maps a controller (the System's roots) to the group's
	// directory there; on v1, cpuset only when the group is pinned.
	dirs map[string]string
	// roots are the System's.
	roots map[string]string
}

// Open finds an existing group by its recorded path; an error when it is
// gone.
func Open(path string) (*Group, error) {
	sys, err := Detect()
	if err != nil {
		return nil, err
	}
	return sys.open(path)
}

func (s *System) open(path string) (*Group, error) {
	g, err := s.group(path)
	if err != nil {
		return nil, err
	}
	for c, d := range g.dirs {
		if _, err := os.Stat(d); err != nil {
			if c == "cpuset" && errors.Is(err, os.ErrNotExist) {
				delete(g.dirs, c) // a group without pinning has none
				continue
			}
			return nil, fmt.Errorf("cgroup %s: %w", path, err)
		}
	}
	return g, nil
}

// group is path's directories in every controller, without touching the
// file system. A path is relative, its elements neither empty nor "." or
// "..", and no directory may hold a quote or a control character (Wrap
// quotes them for the shell).
func (s *System) group(path string) (*Group, error) {
	bad := func(why string) (*Group, error) {
		return nil, fmt.Errorf("cgroup: bad path %q: %s", path, why)
	}
	if path == "" || strings.HasPrefix(path, "/") {
		return bad("not a relative path such as scalelab/c1/node1")
	}
	for _, e := range strings.Split(path, "/") {
		if e == "" || e == "." || e == ".." {
			return bad("empty, . or .. element")
		}
	}
	g := &Group{Path: path, Version: s.Version, dirs: map[string]string{}, roots: s.roots}
	for c, root := range s.roots {
		d := filepath.Join(root, filepath.FromSlash(path))
		if strings.ContainsFunc(d, func(r rune) bool { return r == '\'' || r < ' ' || r == 0x7f }) {
			return bad(fmt.Sprintf("directory %q holds a quote or a control character", d))
		}
		g.dirs[c] = d
	}
	return g, nil
}

// Create makes path's group with limits l and returns it. v1: the group
// in cpu, cpuacct and memory, and in cpuset when l pins CPUs; v2: the
// group with cpu and memory (and cpuset) enabled in every ancestor. On
// error it removes the directories it made. A refusal to write the
// hierarchy is an error saying limits need root or a delegated cgroup v2
// subtree.
func (s *System) Create(path string, l Limits) (*Group, error) {
	g, err := s.group(path)
	if err != nil {
		return nil, err
	}
	if !(l.CPUs >= 0 && l.CPUs <= maxCPUs) || l.MemoryBytes < 0 {
		return nil, fmt.Errorf("cgroup %s: limits out of range: %+v", path, l)
	}
	if d, ok := g.dirs["cpuset"]; ok && s.Version == 1 && l.CPUSet == "" {
		// a stale cpuset directory of an earlier group must not pin this one
		_ = os.Remove(d)
		delete(g.dirs, "cpuset")
	}
	if err := s.available(l); err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", path, err)
	}
	for c := range g.dirs {
		if s.readOnly[c] {
			return nil, fmt.Errorf("cgroup %s: %s is mounted read-only: %s", path, s.roots[c], needRoot)
		}
	}
	var made []string
	for attempt := 0; ; attempt++ {
		if s.Version == 2 {
			err = g.createV2(l, &made)
		} else {
			err = g.createV1(l, &made)
		}
		if err == nil {
			return g, nil
		}
		for i := len(made) - 1; i >= 0; i-- {
			_ = os.Remove(made[i])
		}
		made = made[:0]
		// a concurrent Remove of another group took an empty parent away
		// between two mkdirs: make it again
		if !errors.Is(err, errVanished) || attempt == 2 {
			return nil, permission(path, err)
		}
	}
}

// needRoot is what a refusal to write the hierarchy takes.
const needRoot = "limits need root, or a cgroup v2 subtree delegated to this user"

// permission explains a refusal to write the hierarchy.
func permission(path string, err error) error {
	if errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EPERM) {
		return fmt.Errorf("cgroup %s: %w: %s", path, err, needRoot)
	}
	return fmt.Errorf("cgroup %s: %w", path, err)
}

// errVanished marks a mkdir whose parent had gone.
var errVanished = errors.New("parent directory vanished")

// mkdirs makes path's elements below root one at a time, calling each(parent,
// dir) after every level (made or already there), and appends what it
// made to made.
func mkdirs(root, path string, made *[]string, each func(parent, dir string) error) error {
	parent := root
	for _, e := range strings.Split(path, "/") {
		d := filepath.Join(parent, e)
		err := os.Mkdir(d, 0o755)
		switch {
		case err == nil:
			*made = append(*made, d)
		case errors.Is(err, os.ErrNotExist) && parent != root:
			return fmt.Errorf("create %s: %w: %w", d, errVanished, bare(err))
		case !errors.Is(err, os.ErrExist):
			return fmt.Errorf("create %s: %w", d, bare(err))
		}
		if each != nil {
			if err := each(parent, d); err != nil {
				return err
			}
		}
		parent = d
	}
	return nil
}

// write writes one control file.
func write(dir, file, value string) error {
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		return fmt.Errorf("write %s = %q: %w", path, value, bare(err))
	}
	return nil
}

// bare is err without the operation and path of an *os.PathError, for
// messages that name the file themselves.
func bare(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Wrap returns a command that joins the group and then execs cmd in its
// place, so that cmd and every process it forks are inside from their
// first instruction:
//
//	/bin/sh -c "echo $$ > '<dir>/cgroup.procs' && ... && exec \"$@\"" sh cmd...
//
// When a join fails the shell exits with an error before cmd runs.
func (g *Group) Wrap(cmd []string) []string {
	var b strings.Builder
	for _, d := range g.dirList() {
		fmt.Fprintf(&b, "echo $$ > '%s' && ", filepath.Join(d, "cgroup.procs"))
	}
	b.WriteString(`exec "$@"`)
	return append([]string{"/bin/sh", "-c", b.String(), "sh"}, cmd...)
}

// dirList is the group's directories in a stable order, each once (v1's
// cpu and cpuacct are often one mount).
func (g *Group) dirList() []string {
	var out []string
	for _, c := range []string{"", "cpu", "cpuacct", "memory", "cpuset"} {
		if d, ok := g.dirs[c]; ok && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// Usage is a group's consumption since it was made.
type Usage struct {
	// CPUNanos is the CPU time of every process that ran in it.
	CPUNanos uint64
	// MemoryBytes is the memory it uses now, page cache included.
	MemoryBytes int64
	// Periods counts the CFS enforcement periods in which it ran.
	Periods uint64
	// ThrottledPeriods counts the periods in which it used up its quota.
	ThrottledPeriods uint64
	// ThrottledNanos is the time its processes waited for quota.
	ThrottledNanos uint64
}

// Usage reads the group's usage: v1 cpuacct.usage, memory.usage_in_bytes
// and cpu.stat; v2 cpu.stat and memory.current.
func (g *Group) Usage() (Usage, error) {
	read := g.usageV1
	if g.Version == 2 {
		read = g.usageV2
	}
	u, err := read()
	if err != nil {
		return u, fmt.Errorf("cgroup %s: %w", g.Path, err)
	}
	return u, nil
}

// Limits reads back the limits in force; a limit it cannot read is 0.
func (g *Group) Limits() Limits {
	if g.Version == 2 {
		return g.limitsV2()
	}
	return g.limitsV1()
}

// removeWait is how long Remove waits for a group whose last process has
// just exited to become removable.
const removeWait = time.Second

// Remove removes the group's directory in every controller, then its
// parents up to and including the first element of its path, each when
// empty. It kills nothing: when a directory still holds processes it
// removes none and the error names it and them. Directories already gone
// are no error.
func (g *Group) Remove() error {
	var errs []error
	for _, d := range g.dirList() {
		if pids := readPids(d); len(pids) > 0 {
			errs = append(errs, fmt.Errorf("remove %s: processes %v still inside", d, pids))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("cgroup %s: %w", g.Path, errors.Join(errs...))
	}
	depth := strings.Count(g.Path, "/")
	var done []string
	for _, c := range []string{"", "cpu", "cpuacct", "memory", "cpuset"} {
		leaf, ok := g.dirs[c]
		if !ok || slices.Contains(done, leaf) {
			continue
		}
		done = append(done, leaf)
		if err := rmdirLeaf(leaf); err != nil {
			errs = append(errs, fmt.Errorf("cgroup %s: %w", g.Path, err))
			continue
		}
		root, d := g.roots[c], leaf
		for range depth {
			d = filepath.Dir(d)
			if d == root || !strings.HasPrefix(d, root) {
				break
			}
			if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
				break // it holds another group
			}
		}
	}
	return errors.Join(errs...)
}

// rmdirLeaf removes a group's directory. While the kernel says it is
// busy but lists no process in it (one that has just exited can linger a
// moment) it tries again, up to removeWait.
func rmdirLeaf(dir string) error {
	end := time.Now().Add(removeWait)
	for {
		err := os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		busy := errors.Is(err, syscall.EBUSY) || errors.Is(err, syscall.ENOTEMPTY)
		if pids := readPids(dir); busy && len(pids) > 0 {
			return fmt.Errorf("remove %s: processes %v still inside: %w", dir, pids, bare(err))
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(end) {
			return fmt.Errorf("remove %s: %w", dir, bare(err))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// readPids is the processes in one directory's cgroup.procs.
func readPids(dir string) []int {
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Procs lists the processes in the group now, each once.
func (g *Group) Procs() ([]int, error) {
	var pids []int
	for _, d := range g.dirList() {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("cgroup %s: read cgroup.procs: %w", g.Path, err)
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && !slices.Contains(pids, pid) {
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

// readUint reads a file holding one number.
func readUint(dir, file string) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", file, err)
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", file, err)
	}
	return v, nil
}

// readKV reads a "key value" file such as cpu.stat.
func readKV(dir, file string) (map[string]uint64, error) {
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	return parseKV(b), nil
}

// SetShares sets the group's CPU weight against its siblings when the
// machine's CPUs are contended, in v1's cpu.shares units (1024 is the
// default); on v2 it becomes cpu.weight (100 is the default). The quota
// still caps the group: a larger share only lets it reach its quota on a
// busy machine.
func (g *Group) SetShares(shares int) error {
	dir, ok := g.dirs["cpu"]
	file, value := "cpu.shares", strconv.Itoa(min(max(shares, 2), 262144))
	if g.Version == 2 {
		dir, ok = g.dirs[""]
		file, value = "cpu.weight", strconv.Itoa(min(max(shares*100/1024, 1), 10000))
	}
	if !ok {
		return fmt.Errorf("cgroup %s: no cpu controller", g.Path)
	}
	return write(dir, file, value)
}
