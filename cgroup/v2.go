package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// createV2 enables the controllers from the root down, makes the group
// and writes the limits.
func (g *Group) createV2(root string, l Limits) error {
	ctrl := []string{"+cpu", "+memory"}
	if l.CPUSet != "" {
		ctrl = append(ctrl, "+cpuset")
	}
	dir := root
	for _, p := range strings.Split(g.Path, "/") {
		if err := write(dir, "cgroup.subtree_control", strings.Join(ctrl, " ")); err != nil {
			return err
		}
		dir = filepath.Join(dir, p)
		if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
			return fmt.Errorf("create %s: %w", dir, err)
		}
	}
	d := g.dirs[""]
	if l.CPUs > 0 {
		if err := write(d, "cpu.max", fmt.Sprintf("%d %d", quotaUs(l.CPUs), cfsPeriodUs)); err != nil {
			return err
		}
	}
	if l.MemoryBytes > 0 {
		if err := write(d, "memory.max", strconv.FormatInt(l.MemoryBytes, 10)); err != nil {
			return err
		}
	}
	if l.CPUSet != "" {
		if err := write(d, "cpuset.cpus", l.CPUSet); err != nil {
			return err
		}
	}
	return nil
}

func (g *Group) usageV2() (Usage, error) {
	var u Usage
	d := g.dirs[""]
	st, err := readKV(filepath.Join(d, "cpu.stat"))
	if err != nil {
		return u, fmt.Errorf("cgroup %s: %w", g.Path, err)
	}
	u.CPUNanos = st["usage_usec"] * 1000
	u.Periods, u.ThrottledPeriods, u.ThrottledNanos = st["nr_periods"], st["nr_throttled"], st["throttled_usec"]*1000
	mem, err := readUint(filepath.Join(d, "memory.current"))
	if err != nil {
		return u, fmt.Errorf("cgroup %s: %w", g.Path, err)
	}
	u.MemoryBytes = int64(mem)
	return u, nil
}

func (g *Group) limitsV2() Limits {
	var l Limits
	d := g.dirs[""]
	if b, err := os.ReadFile(filepath.Join(d, "cpu.max")); err == nil {
		f := strings.Fields(string(b))
		if len(f) == 2 && f[0] != "max" {
			q, _ := strconv.ParseFloat(f[0], 64)
			p, _ := strconv.ParseFloat(f[1], 64)
			if p > 0 {
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
