package telemetry

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of CPU times in /proc: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// procStat is what one /proc/PID/stat line says.
type procStat struct {
	ppid int
	cpu  uint64 // utime + stime + cutime + cstime, in clock ticks
	user uint64 // utime + cutime
	sys  uint64 // stime + cstime
	// the process's own, without its finished children's
	selfUser, selfSys uint64
	threads           int
	rssPg             int64
}

// parseStat parses /proc/PID/stat. The command name is in parentheses and
// may hold spaces, so fields are counted after the last ')'.
func parseStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return procStat{}, fmt.Errorf("malformed stat line")
	}
	f := strings.Fields(string(b[i+2:]))
	// f[0] is field 3 (state): field k is f[k-3]
	if len(f) < 22 {
		return procStat{}, fmt.Errorf("stat line has %d fields after the name", len(f))
	}
	num := func(k int) uint64 { v, _ := strconv.ParseUint(f[k-3], 10, 64); return v }
	ppid, _ := strconv.Atoi(f[4-3])
	thr, _ := strconv.Atoi(f[20-3])
	rss, _ := strconv.ParseInt(f[24-3], 10, 64)
	ps := procStat{ppid: ppid, user: num(14) + num(16), sys: num(15) + num(17), selfUser: num(14), selfSys: num(15), threads: thr, rssPg: rss}
	ps.cpu = ps.user + ps.sys
	return ps, nil
}

// snapshot is every process of the machine at one instant.
type snapshot struct {
	stats    map[int]procStat
	children map[int][]int
}

// takeSnapshot reads /proc/PID/stat of every process.
func takeSnapshot(procDir string) (*snapshot, error) {
	d, err := os.Open(procDir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", procDir, err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", procDir, err)
	}
	s := &snapshot{stats: make(map[int]procStat, len(names)), children: map[int][]int{}}
	buf := make([]byte, 0, 1024)
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		b, err := readInto(procDir+"/"+n+"/stat", buf)
		if err != nil {
			continue // exited meanwhile
		}
		ps, err := parseStat(b)
		if err != nil {
			continue
		}
		s.stats[pid] = ps
		s.children[ps.ppid] = append(s.children[ps.ppid], pid)
	}
	return s, nil
}

// readInto reads a small file into buf's storage.
func readInto(path string, buf []byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf = buf[:cap(buf)]
	n, err := f.Read(buf)
	if n == 0 && err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// tree returns pid and its descendants, leaving out the subtrees of
// roots in skip (other nodes started by the same parent).
func (s *snapshot) tree(pid int, skip map[int]bool) []int {
	if _, ok := s.stats[pid]; !ok {
		return nil
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		for _, c := range s.children[out[i]] {
			if !skip[c] {
				out = append(out, c)
			}
		}
	}
	return out
}

// treeUsage is a process tree's figures at one instant.
type treeUsage struct {
	user, sys   uint64 // clock ticks
	rssBytes    int64
	threads     int
	read, write int64 // bytes, from /proc/PID/io (parseIO)
}

// usage sums the tree's figures; withIO reads /proc/PID/io of each.
func (s *snapshot) usage(procDir string, pids []int, withIO bool) treeUsage {
	var u treeUsage
	page := int64(os.Getpagesize())
	buf := make([]byte, 0, 512)
	for _, p := range pids {
		ps := s.stats[p]
		u.user += ps.user
		u.sys += ps.sys
		u.rssBytes += ps.rssPg * page
		u.threads += ps.threads
		if withIO {
			if b, err := readInto(procDir+"/"+strconv.Itoa(p)+"/io", buf); err == nil {
				r, w := parseIO(b)
				u.read += r
				u.write += w
			}
		}
	}
	return u
}

// parseIO returns what a node read and wrote from /proc/PID/io: read is
// read_bytes, the bytes fetched from storage (not from the page cache);
// write is wchar, the bytes the process passed to write calls. Not
// write_bytes: that one counts a whole page (a whole folio, up to
// megabytes, on kernels that cache files in large folios) each time a
// page is dirtied again after being written back, so a server that
// appends a few hundred bytes to its log and syncs at every commit reads
// as writing gigabytes it never wrote.
func parseIO(b []byte) (read, write int64) {
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch k {
		case "read_bytes":
			read = n
		case "wchar":
			write = n
		}
	}
	return read, write
}

// hostCPU reads the machine's busy and total CPU ticks from /proc/stat.
func hostCPU(procDir string) (busy, total uint64, err error) {
	b, err := os.ReadFile(procDir + "/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("read %s/stat: %w", procDir, err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("read %s/stat: unexpected first line", procDir)
	}
	// user nice system idle iowait irq softirq steal; guest time is
	// already inside user
	for i, x := range f[1:min(len(f), 9)] {
		v, _ := strconv.ParseUint(x, 10, 64)
		total += v
		if i != 3 && i != 4 { // idle and iowait
			busy += v
		}
	}
	return busy, total, nil
}
