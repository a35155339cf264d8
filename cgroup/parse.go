package cgroup

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
)

// Limits confine one node.
type Limits struct {
	CPUs        float64 `json:"cpus,omitempty"`         // cores, e.g. 0.5; 0: none
	MemoryBytes int64   `json:"memory_bytes,omitempty"` // 0: none
	CPUSet      string  `json:"cpuset,omitempty"`       // e.g. "0" or "0-1"; "": any CPU
}

// IsZero reports whether l confines nothing.
func (l Limits) IsZero() bool { return l.CPUs == 0 && l.MemoryBytes == 0 && l.CPUSet == "" }

// String is "cpus 0.5, memory 1 GiB, cpuset 0".
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

// FormatBytes is "512 MiB", "1.5 GiB".
func FormatBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return strconv.FormatFloat(float64(b)/(1<<30), 'f', -1, 64) + " GiB"
	case b >= 1<<20:
		return strconv.FormatFloat(float64(b)/(1<<20), 'f', -1, 64) + " MiB"
	}
	return strconv.FormatInt(b, 10) + " B"
}

// ParseCPUs reads a CPU limit in cores: "0.5", "2".
func ParseCPUs(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || v < 0.01 || v > 1024 {
		return 0, fmt.Errorf("cpus %q: allowed: cores from 0.01 to 1024, e.g. 0.5 or 2", s)
	}
	return v, nil
}

// ParseMemory reads a memory limit: "512m", "1g", "1.5g", "256MiB", or
// bytes; at least 4 MiB.
func ParseMemory(s string) (int64, error) {
	bad := fmt.Errorf("memory %q: allowed: a size of at least 4 MiB such as 512m, 1g, 1.5g or 256MiB", s)
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "ib"), "b")
	mult := 1.0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k':
			mult = 1 << 10
		case 'm':
			mult = 1 << 20
		case 'g':
			mult = 1 << 30
		case 't':
			mult = 1 << 40
		}
		if mult > 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 {
		return 0, bad
	}
	b := int64(v * mult)
	if b < 4<<20 {
		return 0, bad
	}
	return b, nil
}

// ParseCPUSet reads a CPU list: "0", "0-1", "0,2"; every CPU must exist
// on this machine.
func ParseCPUSet(s string) (string, error) {
	s = strings.TrimSpace(s)
	n := runtime.NumCPU()
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("cpuset %q: %s; allowed: CPU numbers from 0 to %d as a list or ranges, e.g. 0, 0-1 or 0,2", s, why, n-1)
	}
	if s == "" {
		return bad("empty")
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a {
			return bad("not a CPU list")
		}
		if b >= n {
			return bad(fmt.Sprintf("this machine has CPUs 0 to %d", n-1))
		}
	}
	return s, nil
}
