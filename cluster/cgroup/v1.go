package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cfsPeriodUs is the CFS period, in microseconds, CPU limits are
// expressed in.
const cfsPeriodUs = 100000

// quotaUs is the CFS quota per period of a CPU limit, at least the
// kernel's smallest, 1 ms.
func quotaUs(cpus float64) int64 {
	return max(1000, int64(cpus*cfsPeriodUs+0.5))
}

// createV1 makes the group in every v1 controller it has a directory in
// and writes the limits; a limit that is not set is written as none, so
// that a stale group of the same path keeps no old limit.
func (g *Group) createV1(l Limits, made *[]string) error {
	for _, c := range []string{"cpu", "cpuacct", "memory"} {
		if err := mkdirs(g.roots[c], g.Path, made, nil); err != nil {
			return err
		}
	}
	if _, ok := g.dirs["cpuset"]; ok {
		if err := mkdirs(g.roots["cpuset"], g.Path, made, inheritCpuset); err != nil {
			return err
		}
	}
	cpu := g.dirs["cpu"]
	quota := int64(-1)
	if l.CPUs > 0 {
		quota = quotaUs(l.CPUs)
	}
	if err := write(cpu, "cpu.cfs_period_us", strconv.Itoa(cfsPeriodUs)); err != nil {
		return err
	}
	if err := write(cpu, "cpu.cfs_quota_us", strconv.FormatInt(quota, 10)); err != nil {
		return err
	}
	mem := int64(-1)
	if l.MemoryBytes > 0 {
		mem = l.MemoryBytes
	}
	if err := write(g.dirs["memory"], "memory.limit_in_bytes", strconv.FormatInt(mem, 10)); err != nil {
		return err
	}
	if l.CPUSet != "" {
		if err := write(g.dirs["cpuset"], "cpuset.cpus", l.CPUSet); err != nil {
			return err
		}
	}
	return nil
}

// inheritCpuset gives a v1 cpuset directory without CPUs or memory nodes
// its parent's: until both are written no process can join it, nor can a
// child directory get any.
func inheritCpuset(parent, dir string) error {
	for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
		cur, _ := os.ReadFile(filepath.Join(dir, f))
		if strings.TrimSpace(string(cur)) != "" {
			continue
		}
		v, err := os.ReadFile(filepath.Join(parent, f))
		if err != nil {
			return fmt.Errorf("read %s: %w", filepath.Join(parent, f), bare(err))
		}
		if err := write(dir, f, strings.TrimSpace(string(v))); err != nil {
			return err
		}
	}
	return nil
}

// usageV1 reads cpuacct.usage, memory.usage_in_bytes and cpu.stat.
func (g *Group) usageV1() (Usage, error) {
	var u Usage
	var err error
	if u.CPUNanos, err = readUint(g.dirs["cpuacct"], "cpuacct.usage"); err != nil {
		return u, err
	}
	mem, err := readUint(g.dirs["memory"], "memory.usage_in_bytes")
	if err != nil {
		return u, err
	}
	u.MemoryBytes = int64(mem)
	st, err := readKV(g.dirs["cpu"], "cpu.stat")
	if err != nil {
		return u, err
	}
	u.Periods, u.ThrottledPeriods, u.ThrottledNanos = st["nr_periods"], st["nr_throttled"], st["throttled_time"]
	return u, nil
}

// limitsV1 reads cpu.cfs_quota_us and cpu.cfs_period_us,
// memory.limit_in_bytes and cpuset.cpus.
func (g *Group) limitsV1() Limits {
	var l Limits
	cpu := g.dirs["cpu"]
	q, _ := os.ReadFile(filepath.Join(cpu, "cpu.cfs_quota_us"))
	p, _ := readUint(cpu, "cpu.cfs_period_us")
	if qv, err := strconv.ParseInt(strings.TrimSpace(string(q)), 10, 64); err == nil && qv > 0 && p > 0 {
		l.CPUs = float64(qv) / float64(p)
	}
	// no limit reads as the largest page-aligned number
	if m, err := readUint(g.dirs["memory"], "memory.limit_in_bytes"); err == nil && m < 1<<62 {
		l.MemoryBytes = int64(m)
	}
	if d, ok := g.dirs["cpuset"]; ok {
		b, _ := os.ReadFile(filepath.Join(d, "cpuset.cpus"))
		l.CPUSet = strings.TrimSpace(string(b))
	}
	return l
}
