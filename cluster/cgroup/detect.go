package cgroup

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// mountinfoPath is where Detect reads the mounts of this process.
const mountinfoPath = "/proc/self/mountinfo"

// System is the cgroup hierarchy this machine offers for limits.
type System struct {
	// Version is 1 or 2.
	Version int
	// roots maps a controller (v1: cpu, cpuacct, memory and, when
	// mounted, cpuset) to its mount point; v2 has its one root under "".
	roots map[string]string
	// controllers are, on v2, those the root's cgroup.controllers offers.
	controllers []string
	// readOnly holds the roots mounted read-only.
	readOnly map[string]bool
}

// fixHint says how to give this machine a hierarchy with limits.
const fixHint = "enable the cpu and memory controllers of cgroup v2, or mount the v1 cpu, cpuacct and memory controllers (or run without --cpus/--memory/--cpuset)"

// Detect finds the hierarchy from /proc/self/mountinfo: cgroup v2 when a
// cgroup2 mount offers the cpu and memory controllers in its
// cgroup.controllers, else cgroup v1 when its cpu, cpuacct and memory
// controllers are mounted. When neither, the error says what is missing
// and what to do.
func Detect() (*System, error) {
	b, err := os.ReadFile(mountinfoPath)
	if err != nil {
		return nil, fmt.Errorf("cgroup: read %s: %w", mountinfoPath, err)
	}
	return detectFrom(b)
}

// detectFrom is Detect on a mountinfo text; the mount points it names are
// read for cgroup.controllers.
func detectFrom(mountinfo []byte) (*System, error) {
	v1 := map[string]string{}
	ro := map[string]bool{}
	var problems []string
	var v2 *System
	for _, m := range parseMountinfo(mountinfo) {
		switch m.fstype {
		case "cgroup2":
			if v2 != nil {
				continue
			}
			b, err := os.ReadFile(filepath.Join(m.point, "cgroup.controllers"))
			if err != nil {
				problems = append(problems, fmt.Sprintf("the cgroup v2 hierarchy at %s: %v", m.point, err))
				continue
			}
			have := strings.Fields(string(b))
			if slices.Contains(have, "cpu") && slices.Contains(have, "memory") {
				v2 = &System{Version: 2, roots: map[string]string{"": m.point}, controllers: have, readOnly: map[string]bool{"": m.readOnly}}
				continue
			}
			offers := "no controller"
			if len(have) > 0 {
				offers = "only " + strings.Join(have, " ")
			}
			problems = append(problems, fmt.Sprintf("the cgroup v2 hierarchy at %s offers %s, not cpu and memory", m.point, offers))
		case "cgroup":
			for _, c := range m.super {
				switch c {
				case "cpu", "cpuacct", "memory", "cpuset":
					if _, seen := v1[c]; !seen {
						v1[c] = m.point
						ro[c] = m.readOnly
					}
				}
			}
		}
	}
	if v2 != nil {
		return v2, nil
	}
	var missing []string
	for _, c := range []string{"cpu", "cpuacct", "memory"} {
		if v1[c] == "" {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return &System{Version: 1, roots: v1, readOnly: ro}, nil
	}
	if len(v1) > 0 || len(problems) > 0 {
		problems = append(problems, "the cgroup v1 controllers "+strings.Join(missing, ", ")+" are not mounted")
	} else {
		problems = append(problems, "no cgroup hierarchy is mounted")
	}
	return nil, fmt.Errorf("cgroup: no hierarchy with the cpu and memory controllers: %s; %s", strings.Join(problems, "; "), fixHint)
}

// available says which controller l needs that s lacks.
func (s *System) available(l Limits) error {
	if l.CPUSet == "" {
		return nil
	}
	if s.Version == 2 && !slices.Contains(s.controllers, "cpuset") {
		return fmt.Errorf("cpuset %s: the cgroup v2 hierarchy at %s offers no cpuset controller; enable it or run without --cpuset", l.CPUSet, s.roots[""])
	}
	if s.Version == 1 && s.roots["cpuset"] == "" {
		return fmt.Errorf("cpuset %s: the cgroup v1 cpuset controller is not mounted; mount it or run without --cpuset", l.CPUSet)
	}
	return nil
}

// mount is one line of /proc/self/mountinfo.
type mount struct {
	point    string   // where it is mounted
	fstype   string   // "cgroup", "cgroup2", ...
	readOnly bool     // mounted read-only
	super    []string // super-block options: the v1 controllers of a cgroup mount
}

// parseMountinfo reads the lines of a mountinfo text:
//
//	ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
//
// skipping lines it cannot read.
func parseMountinfo(text []byte) []mount {
	var out []mount
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || len(f) < sep+4 {
			continue
		}
		out = append(out, mount{
			point:    unescape(f[4]),
			fstype:   f[sep+1],
			readOnly: hasOption(f[5], "ro") || hasOption(f[sep+3], "ro"),
			super:    strings.Split(f[sep+3], ","),
		})
	}
	return out
}

func hasOption(opts, o string) bool {
	for _, x := range strings.Split(opts, ",") {
		if x == o {
			return true
		}
	}
	return false
}

// unescape undoes mountinfo's octal escapes ("\040" for a space).
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
