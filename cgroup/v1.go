package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cfsPeriodUs is the CFS period limits are expressed in.
const cfsPeriodUs = 100000

// createV1 makes the group in each v1 controller and writes the limits.
func (g *Group) createV1(roots map[string]string, l Limits) error {
	for c, d := range g.dirs {
		if c == "cpuset" {
			if err := mkdirCpuset(roots["cpuset"], g.Path); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
	}
	if l.CPUs > 0 {
		if err := write(g.dirs["cpu"], "cpu.cfs_period_us", strconv.Itoa(cfsPeriodUs)); err != nil {
			return err
		}
		if err := write(g.dirs["cpu"], "cpu.cfs_quota_us", strconv.Itoa(quotaUs(l.CPUs))); err != nil {
			return err
		}
	}
	if l.MemoryBytes > 0 {
		if err := write(g.dirs["memory"], "memory.limit_in_bytes", strconv.FormatInt(l.MemoryBytes, 10)); err != nil {
			return err
		}
	}
	if l.CPUSet != "" {
		if err := write(g.dirs["cpuset"], "cpuset.cpus", l.CPUSet); err != nil {
			return err
		}
	}
	return nil
}

// quotaUs is the CFS quota of a CPU limit, at least 1 ms per period.
func quotaUs(cpus float64) int {
	return max(1000, int(cpus*cfsPeriodUs+0.5))
}

// mkdirCpuset creates path below the v1 cpuset root one level at a time:
// a new cpuset directory holds no CPU and no memory node until they are
// written, and a process cannot join it before.
func mkdirCpuset(root, path string) error {
	parent := root
	for _, p := range strings.Split(path, "/") {
		d := filepath.Join(parent, p)
		if _, err := os.Stat(d); os.IsNotExist(err) {
			if err := os.Mkdir(d, 0o755); err != nil {
				return fmt.Errorf("create %s: %w", d, err)
			}
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			cur, _ := os.ReadFile(filepath.Join(d, f))
			if strings.TrimSpace(string(cur)) != "" {
				continue
			}
			v, err := os.ReadFile(filepath.Join(parent, f))
			if err != nil {
				return fmt.Errorf("read %s: %w", filepath.Join(parent, f), err)
			}
			if err := write(d, f, strings.TrimSpace(string(v))); err != nil {
				return err
			}
		}
		parent = d
	}
	return nil
}

func (g *Group) usageV1() (Usage, error) {
	var u Usage
	var err error
	if u.CPUNanos, err = readUint(filepath.Join(g.dirs["cpuacct"], "cpuacct.usage")); err != nil {
		return u, fmt.Errorf("cgroup %s: %w", g.Path, err)
	}
	mem, err := readUint(filepath.Join(g.dirs["memory"], "memory.usage_in_bytes"))
	if err != nil {
		return u, fmt.Errorf("cgroup %s: %w", g.Path, err)
	}
	u.MemoryBytes = int64(mem)
	if st, err := readKV(filepath.Join(g.dirs["cpu"], "cpu.stat")); err == nil {
		u.Periods, u.ThrottledPeriods, u.ThrottledNanos = st["nr_periods"], st["nr_throttled"], st["throttled_time"]
	}
	return u, nil
}

func (g *Group) limitsV1() Limits {
	var l Limits
	q, _ := os.ReadFile(filepath.Join(g.dirs["cpu"], "cpu.cfs_quota_us"))
	p, _ := readUint(filepath.Join(g.dirs["cpu"], "cpu.cfs_period_us"))
	if qv, err := strconv.ParseInt(strings.TrimSpace(string(q)), 10, 64); err == nil && qv > 0 && p > 0 {
		l.CPUs = float64(qv) / float64(p)
	}
	if m, err := readUint(filepath.Join(g.dirs["memory"], "memory.limit_in_bytes")); err == nil && m < 1<<62 {
		l.MemoryBytes = int64(m)
	}
	if d, ok := g.dirs["cpuset"]; ok {
		b, _ := os.ReadFile(filepath.Join(d, "cpuset.cpus"))
		l.CPUSet = strings.TrimSpace(string(b))
	}
	return l
}
