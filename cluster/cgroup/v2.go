package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// createV2 enables the controllers l needs in the cgroup.subtree_control
// of every ancestor of the group, from the hierarchy's root down, makes
// the group and writes the limits; a CPU or memory limit that is not set
// is written as "max", so that a stale group of the same path keeps no
// old limit.
func (g *Group) createV2(l Limits, made *[]string) error {
	ctrl := "+cpu +memory"
	if l.CPUSet != "" {
		ctrl += " +cpuset"
	}
	root := g.roots[""]
	enable := func(dir string) error {
		err := write(dir, "cgroup.subtree_control", ctrl)
		if errors.Is(err, syscall.EBUSY) {
			return fmt.Errorf("%w (a cgroup v2 group that holds processes cannot pass controllers to its children)", err)
		}
		return err
	}
	if err := enable(root); err != nil {
		return err
	}
	leaf := g.dirs[""]
	err := mkdirs(root, g.Path, made, func(_, dir string) error {
		if dir == leaf {
			return nil
		}
		return enable(dir)
	})
	if err != nil {
		return err
	}
	cpu := "max " + strconv.Itoa(cfsPeriodUs)
	if l.CPUs > 0 {
		cpu = fmt.Sprintf("%d %d", quotaUs(l.CPUs), cfsPeriodUs)
	}
	if err := write(leaf, "cpu.max", cpu); err != nil {
		return err
	}
	mem := "max"
	if l.MemoryBytes > 0 {
		mem = strconv.FormatInt(l.MemoryBytes, 10)
	}
	if err := write(leaf, "memory.max", mem); err != nil {
		return err
	}
	if l.CPUSet != "" {
		if err := write(leaf, "cpuset.cpus", l.CPUSet); err != nil {
			return err
		}
	}
	return nil
}

// usageV2 reads cpu.stat and memory.current.
func (g *Group) usageV2() (Usage, error) {
	var u Usage
	d := g.dirs[""]
	st, err := readKV(d, "cpu.stat")
	if err != nil {
		return u, err
	}
	u.CPUNanos = st["usage_usec"] * 1000
	u.Periods, u.ThrottledPeriods, u.ThrottledNanos = st["nr_periods"], st["nr_throttled"], st["throttled_usec"]*1000
	mem, err := readUint(d, "memory.current")
	if err != nil {
		return u, err
	}
	u.MemoryBytes = int64(mem)
	return u, nil
}

// limitsV2 reads cpu.max, memory.max and cpuset.cpus.
func (g *Group) limitsV2() Limits {
	var l Limits
	d := g.dirs[""]
	if b, err := os.ReadFile(filepath.Join(d, "cpu.max")); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 && f[0] != "max" {
			q, err1 := strconv.ParseFloat(f[0], 64)
			p, err2 := strconv.ParseFloat(f[1], 64)
			if err1 == nil && err2 == nil && p > 0 {
				l.CPUs = q / p
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(d, "memory.max")); err == nil {
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
			l.MemoryBytes = v
		}
	}
	if b, err := os.ReadFile(filepath.Join(d, "cpuset.cpus")); err == nil {
		l.CPUSet = strings.TrimSpace(string(b))
	}
	return l
}
