package cgroup

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestParseCPUs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
	}{{"0.5", 0.5}, {"2", 2}, {" 0.2 ", 0.2}, {"0.01", 0.01}, {"1024", 1024}} {
		if got, err := ParseCPUs(c.in); err != nil || got != c.want {
			t.Errorf("ParseCPUs(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	wantRefused(t, "ParseCPUs", ParseCPUs, "cpus %q: allowed: cores from 0.01 to 1024 as a decimal number, e.g. 0.5 or 2 (%s)", []refusal{
		{"", "not a number"},
		{"x", "not a number"},
		{"-1", "not a number"},
		{"NaN", "not a number"},
		{"Inf", "not a number"},
		{"1e3", "not a number"},
		{".5", "not a number"},
		{"0", "not positive"},
		{"0.001", "below the kernel's smallest quota, 1 ms per 100 ms"},
		{"1025", "above 1024"},
	})
}

func TestParseMemory(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"512m", 512 << 20}, {"1g", 1 << 30}, {"1.5g", 3 << 29}, {"256MiB", 256 << 20},
		{"1073741824", 1 << 30}, {"64M", 64 << 20}, {"4m", 4 << 20}, {"2GB", 2 << 30},
		{"1 GiB", 1 << 30}, {"4096k", 4 << 20}, {"1t", 1 << 40}, {"5000000b", 5000000},
	} {
		if got, err := ParseMemory(c.in); err != nil || got != c.want {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	wantRefused(t, "ParseMemory", ParseMemory, "memory %q: allowed: a size of at least 4 MiB, a byte count or a number with a unit k, m, g or t, powers of 1024, e.g. 512m, 1g, 1.5g or 256MiB (%s)", []refusal{
		{"", "not a size"},
		{"lots", "not a size"},
		{"-1g", "not a size"},
		{"1.2.3g", "not a size"},
		{"g", "not a size"},
		{"5x", `unknown unit "x"`},
		{"1gig", `unknown unit "gig"`},
		{"0", "below 4 MiB"},
		{"1k", "below 4 MiB"},
		{"3.9m", "below 4 MiB"},
		{"2000000t", "above 1 EiB"},
	})
}

// refusal is an input a parser must refuse and why, as its error says.
type refusal struct{ in, why string }

// wantRefused checks that parse, named name, refuses each input with
// exactly the error fmt.Sprintf(format, in, why).
func wantRefused[T any](t *testing.T, name string, parse func(string) (T, error), format string, cases []refusal) {
	t.Helper()
	for _, c := range cases {
		_, err := parse(c.in)
		if want := fmt.Sprintf(format, c.in, c.why); err == nil || err.Error() != want {
			t.Errorf("%s(%q): %v, want %q", name, c.in, err, want)
		}
	}
}

func TestParseCPUSet(t *testing.T) {
	n := runtime.NumCPU()
	good := []string{"0", fmt.Sprint(n - 1), fmt.Sprintf("0-%d", n-1), " 0 "}
	if n > 2 {
		good = append(good, "0,2")
	}
	for _, in := range good {
		if got, err := ParseCPUSet(in); err != nil || got != strings.TrimSpace(in) {
			t.Errorf("ParseCPUSet(%q) = %q, %v", in, got, err)
		}
	}
	for _, c := range []struct{ in, why string }{
		{"", "empty"},
		{"a", `not a CPU list ("a" is neither a CPU number nor a range)`},
		{"0,", `not a CPU list ("" is neither a CPU number nor a range)`},
		{"0-", `not a CPU list ("0-" is neither a CPU number nor a range)`},
		{"-1", `not a CPU list ("-1" is neither a CPU number nor a range)`},
		{"0, 1", `not a CPU list (" 1" is neither a CPU number nor a range)`},
		{"1-0", `not a CPU list (range "1-0" runs backwards)`},
		{fmt.Sprint(n), fmt.Sprintf("CPU %d does not exist here", n)},
		{fmt.Sprintf("0-%d", n+3), fmt.Sprintf("CPU %d does not exist here", n+3)},
	} {
		_, err := ParseCPUSet(c.in)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("cpuset %q: %s", c.in, c.why)) || !strings.Contains(err.Error(), fmt.Sprintf("allowed: CPU numbers from 0 to %d", n-1)) {
			t.Errorf("ParseCPUSet(%q): %v", c.in, err)
		}
	}
}

func TestLimitsString(t *testing.T) {
	for _, c := range []struct {
		l    Limits
		want string
	}{
		{Limits{CPUs: 0.5, MemoryBytes: 1 << 30, CPUSet: "0"}, "cpus 0.5, memory 1 GiB, cpuset 0"},
		{Limits{MemoryBytes: 3 << 29}, "memory 1.5 GiB"},
		{Limits{MemoryBytes: 1181116006}, "memory 1.1 GiB"},
		{Limits{CPUs: 2, MemoryBytes: 512 << 20}, "cpus 2, memory 512 MiB"},
		{Limits{CPUSet: "0-1"}, "cpuset 0-1"},
		{Limits{}, "none"},
	} {
		if s := c.l.String(); s != c.want {
			t.Errorf("%+v: %q, want %q", c.l, s, c.want)
		}
		if c.l.IsZero() != (c.want == "none") {
			t.Errorf("%+v: IsZero %t", c.l, c.l.IsZero())
		}
	}
	if s := FormatBytes(900); s != "900 B" {
		t.Error(s)
	}
}

func TestParseMountinfo(t *testing.T) {
	text := `22 1 0:21 / /proc rw,nosuid - proc proc rw
35 31 0:32 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:13 master:2 - cgroup cgroup rw,memory
36 31 0:33 /docker/abc /sys/fs/cgroup/cpu\040x ro,relatime - cgroup cgroup rw,cpu,cpuacct
garbage line
41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
`
	got := parseMountinfo([]byte(text))
	want := []mount{
		{point: "/proc", fstype: "proc", super: []string{"rw"}},
		{point: "/sys/fs/cgroup/memory", fstype: "cgroup", super: []string{"rw", "memory"}},
		{point: "/sys/fs/cgroup/cpu x", fstype: "cgroup", readOnly: true, super: []string{"rw", "cpu", "cpuacct"}},
		{point: "/sys/fs/cgroup", fstype: "cgroup2", super: []string{"rw", "nsdelegate", "memory_recursiveprot"}},
	}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
	if kv := parseKV([]byte("usage_usec 12\nbad\nx y\nnr_periods 3\n")); len(kv) != 2 || kv["usage_usec"] != 12 || kv["nr_periods"] != 3 {
		t.Errorf("parseKV %v", kv)
	}
}
