package results

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// HostFacts describes this machine.
func HostFacts() Host {
	h := Host{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoMaxProcs: runtime.GOMAXPROCS(0)}
	h.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	h.MemBytes = memTotal()
	h.CPUModel = cpuModel()
	return h
}

func memTotal() uint64 {
	kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(procField("/proc/meminfo", "MemTotal"), "kB")), 10, 64)
	return kb * 1024
}

func cpuModel() string { return procField("/proc/cpuinfo", "model name") }

// procField returns the value of the first "key: value" line of a /proc
// file, trimmed ("" when the file has none or cannot be read).
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
