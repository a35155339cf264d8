package cgroup

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
)

// Limits confine one node.
type Limits struct {
	// CPUs is the CPU time allowed, in cores (0.5: half of one core's
	// time); 0 means no limit.
	CPUs float64 `json:"cpus,omitempty"`
	// MemoryBytes is the memory allowed; 0 means no limit.
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	// CPUSet lists the CPUs the node's threads may run on ("0", "0-1",
	// "0,2"); "" means any CPU.
	CPUSet string `json:"cpuset,omitempty"`
}

// IsZero reports whether l confines nothing.
func (l Limits) IsZero() bool { return l.CPUs == 0 && l.MemoryBytes == 0 && l.CPUSet == "" }

// String is "cpus 0.5, memory 1 GiB, cpuset 0", with only the limits that
// are set, or "none".
func (l Limits) String() string {
	var parts []string
	if l.CPUs > 0 {
		parts = append(parts, "cpus "+strconv.FormatFloat(l.CPUs, 'f', -1, 64))
	}
	if l.MemoryBytes > 0 {
		parts = append(parts, "memory "+FormatBytes(l.MemoryBytes))
	}
	if l.CPUSet != "" {
		parts = append(parts, "cpuset "+l.CPUSet)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// FormatBytes is a size in the largest binary unit it reaches, with at
// most two decimals: "512 MiB", "1.5 GiB", "900 B".
func FormatBytes(b int64) string {
	units := []struct {
		size int64
		name string
	}{{1 << 40, "TiB"}, {1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}}
	for _, u := range units {
		if b >= u.size {
			v := math.Round(float64(b)/float64(u.size)*100) / 100
			return strconv.FormatFloat(v, 'f', -1, 64) + " " + u.name
		}
	}
	return strconv.FormatInt(b, 10) + " B"
}

// minCPUs is the smallest CPU limit: the kernel's smallest CFS quota,
// 1 ms, per period of 100 ms.
const minCPUs = 0.01

// maxCPUs is the largest CPU limit accepted.
const maxCPUs = 1024

// ParseCPUs reads a CPU limit in cores, a decimal number such as "0.5" or
// "2", from 0.01 (the smallest quota the kernel enforces) to 1024.
func ParseCPUs(s string) (float64, error) {
	t := strings.TrimSpace(s)
	bad := func(why string) (float64, error) {
		return 0, fmt.Errorf("cpus %q: allowed: cores from %g to %d as a decimal number, e.g. 0.5 or 2 (%s)", s, minCPUs, maxCPUs, why)
	}
	if !isDecimal(t) {
		return bad("not a number")
	}
	v, err := strconv.ParseFloat(t, 64)
	switch {
	case err != nil:
		return bad("not a number")
	case v <= 0:
		return bad("not positive")
	case v < minCPUs:
		return bad("below the kernel's smallest quota, 1 ms per 100 ms")
	case v > maxCPUs:
		return bad("above 1024")
	}
	return v, nil
}

// isDecimal reports whether s is digits with at most one decimal point
// between digits: "2", "0.5", not "", ".5", "1e3", "NaN" or "-1".
func isDecimal(s string) bool {
	whole, frac, hasDot := strings.Cut(s, ".")
	return allDigits(whole) && (!hasDot || allDigits(frac))
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// minMemory is the smallest memory limit accepted.
const minMemory = 4 << 20

// maxMemory is the largest memory limit accepted.
const maxMemory = 1 << 60

// memoryUnits are ParseMemory's units, powers of 1024.
var memoryUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
}

// ParseMemory reads a memory limit: a byte count ("1073741824") or a
// number with a binary unit k, m, g or t, optionally followed by b or ib,
// in any case ("512m", "1g", "1.5g", "256MiB"); at least 4 MiB.
func ParseMemory(s string) (int64, error) {
	bad := func(why string) (int64, error) {
		return 0, fmt.Errorf("memory %q: allowed: a size of at least 4 MiB, a byte count or a number with a unit k, m, g or t, powers of 1024, e.g. 512m, 1g, 1.5g or 256MiB (%s)", s, why)
	}
	t := strings.ToLower(strings.TrimSpace(s))
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(t)
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	if !isDecimal(num) {
		return bad("not a size")
	}
	mult, ok := memoryUnits[unit]
	if !ok {
		return bad(fmt.Sprintf("unknown unit %q", unit))
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return bad("not a size")
	}
	b := math.Round(v * mult)
	switch {
	case b < minMemory:
		return bad("below 4 MiB")
	case b > maxMemory:
		return bad("above 1 EiB")
	}
	return int64(b), nil
}

// ParseCPUSet reads a CPU list, numbers and ranges separated by commas
// ("0", "0-1", "0,2"), each CPU one this process can run on (below
// runtime.NumCPU()).
func ParseCPUSet(s string) (string, error) {
	t := strings.TrimSpace(s)
	n := runtime.NumCPU()
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("cpuset %q: %s; allowed: CPU numbers from 0 to %d, single or as ranges, separated by commas, e.g. 0, 0-1 or 0,2", s, why, n-1)
	}
	if t == "" {
		return bad("empty")
	}
	for _, part := range strings.Split(t, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		if !allDigits(lo) || isRange && !allDigits(hi) {
			return bad(fmt.Sprintf("not a CPU list (%q is neither a CPU number nor a range)", part))
		}
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil {
			return bad(fmt.Sprintf("not a CPU list (%q is neither a CPU number nor a range)", part))
		}
		if b < a {
			return bad(fmt.Sprintf("not a CPU list (range %q runs backwards)", part))
		}
		if b >= n {
			return bad(fmt.Sprintf("CPU %d does not exist here (this process can use %d CPUs)", b, n))
		}
	}
	return t, nil
}

// parseKV reads a "key value" file such as cpu.stat; lines that are not
// a key and a number are skipped.
func parseKV(text []byte) map[string]uint64 {
	out := map[string]uint64{}
	for _, line := range strings.Split(string(text), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		if n, err := strconv.ParseUint(f[1], 10, 64); err == nil {
			out[f[0]] = n
		}
	}
	return out
}
