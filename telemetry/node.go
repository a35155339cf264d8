package telemetry

import (
	"fmt"
	"time"

	"github.com/scalelab/scalelab/cluster/cgroup"
	"github.com/scalelab/scalelab/results"
)

// atLimit is the share of a node's CPU limit from which a sample counts
// as "at its limit".
const atLimit = 0.9

// row is one node's figures over one sampling interval.
type row struct {
	cores, user, sys    float64
	rss                 int64
	readPerS, writePerS float64
	readB, writeB       int64 // the bytes behind the rates
	threads             int
	throttled           float64 // share of CFS periods throttled
	thrNs               uint64  // throttled time in the interval
	dt                  float64 // seconds
}

// nodeState is what the sampler keeps of a node between samples.
type nodeState struct {
	Node
	group    *cgroup.Group
	skip     map[int]bool // other nodes' roots
	selfOnly bool         // scalelab: its own threads, not its children
	external bool         // observed by another system (AddExternal)
	source   string       // what observed it, when external
	onHost   bool         // external, but a process of this machine

	have       bool
	at         time.Time
	user, sys  uint64 // clock ticks
	cgCPU      uint64 // ns
	rdB, wrB   int64
	periods    uint64
	throttledP uint64
	throttledN uint64

	// measured window
	samples, atLim, missing int
	cpuS, userS, sysS, wall float64
	maxCores                float64
	peakRSS                 int64
	readB, writeB           int64
	maxThreads              int
	throttledS              float64
	perTick                 map[int]float64
	tick                    int
	series                  []point // every measured sample, for windows
}

// point is one measured sample: the middle of its interval (seconds since
// Config.Start) and the cores used over it.
type point struct{ mid, cores float64 }

// read takes the node's figures now and returns the rates since the last
// read; ok is false on the first read and when the process is gone.
func (ns *nodeState) read(s *Sampler, snap *snapshot, now time.Time) (row, bool) {
	if _, alive := snap.stats[ns.PID]; !alive {
		ns.have = false
		if ns.Refresh != nil {
			if pid := ns.Refresh(); pid > 0 && pid != ns.PID {
				ns.PID = pid
				if ns.group == nil && ns.Cgroup != "" {
					ns.group, _ = cgroup.Open(ns.Cgroup)
				}
			}
		}
		if s.meas {
			ns.missing++
		}
		return row{}, false
	}
	u := snap.usage(s.cfg.ProcDir, ns.pids(snap), true)
	if ns.selfOnly {
		// cutime and cstime of scalelab are its finished children's (a
		// cluster an experiment started), not its own
		ps := snap.stats[ns.PID]
		u.user, u.sys = ps.selfUser, ps.selfSys
	}
	var cu cgroup.Usage
	cgOK := false
	if ns.group != nil {
		var err error
		if cu, err = ns.group.Usage(); err != nil {
			s.addErr(fmt.Sprintf("%s %s: %v", ns.Tier, ns.Name, err))
		} else {
			cgOK = true
		}
	}
	prev := *ns
	ns.at, ns.user, ns.sys, ns.rdB, ns.wrB = now, u.user, u.sys, u.read, u.write
	if cgOK {
		ns.cgCPU, ns.periods, ns.throttledP, ns.throttledN = cu.CPUNanos, cu.Periods, cu.ThrottledPeriods, cu.ThrottledNanos
	}
	if !prev.have {
		ns.have = true
		return row{}, false
	}
	dt := now.Sub(prev.at).Seconds()
	if dt <= 0 {
		return row{}, false
	}
	r := row{rss: u.rssBytes, threads: u.threads, dt: dt}
	r.user = float64(u.user-min(u.user, prev.user)) / clockTicks / dt
	r.sys = float64(u.sys-min(u.sys, prev.sys)) / clockTicks / dt
	r.cores = r.user + r.sys
	r.readB, r.writeB = max(0, u.read-prev.rdB), max(0, u.write-prev.wrB)
	r.readPerS, r.writePerS = float64(r.readB)/dt, float64(r.writeB)/dt
	if cgOK {
		r.cores = float64(cu.CPUNanos-min(cu.CPUNanos, prev.cgCPU)) / 1e9 / dt
		r.rss = cu.MemoryBytes
		if p := cu.Periods - min(cu.Periods, prev.periods); p > 0 {
			r.throttled = float64(cu.ThrottledPeriods-min(cu.ThrottledPeriods, prev.throttledP)) / float64(p)
		}
		r.thrNs = cu.ThrottledNanos - min(cu.ThrottledNanos, prev.throttledN)
	}
	return r, true
}

// pids is the node's processes in snap: its tree, or scalelab alone.
func (ns *nodeState) pids(snap *snapshot) []int {
	if ns.selfOnly {
		return []int{ns.PID}
	}
	return snap.tree(ns.PID, ns.skip)
}

// ioEdge re-reads the node's I/O counters at an edge of the measured
// window, so that its bytes read and written are those of the window
// alone: at the start they become the base of the next sample (the bytes
// since the sample before belong to the data load or the warm-up); at the
// end the bytes since the last sample are added to the window's.
func (ns *nodeState) ioEdge(procDir string, snap *snapshot, end bool) {
	if !ns.have || ns.external {
		return
	}
	if _, alive := snap.stats[ns.PID]; !alive {
		return
	}
	u := snap.usage(procDir, ns.pids(snap), true)
	if end {
		ns.readB += max(0, u.read-ns.rdB)
		ns.writeB += max(0, u.write-ns.wrB)
	}
	ns.rdB, ns.wrB = u.read, u.write
}

// account adds an interval to the node's measured window.
// ts is the sample's time in seconds since Config.Start; keep adds the
// sample to the node's series (Config.Windows).
func (ns *nodeState) account(r row, measured bool, limit, ts float64, keep bool) {
	ns.peakRSS = max(ns.peakRSS, r.rss)
	if !measured {
		return
	}
	if keep {
		ns.series = append(ns.series, point{ts - r.dt/2, r.cores})
	}
	if ns.perTick == nil {
		ns.perTick = map[int]float64{}
	}
	ns.perTick[ns.tick] = r.cores
	ns.tick++
	ns.samples++
	ns.wall += r.dt
	ns.maxCores = max(ns.maxCores, r.cores)
	ns.maxThreads = max(ns.maxThreads, r.threads)
	if atLimitSample(r.cores, limit) {
		ns.atLim++
	}
	ns.throttledS += float64(r.thrNs) / 1e9
	ns.cpuS += r.cores * r.dt
	// user and system split as the process tree reports it
	if t := r.user + r.sys; t > 0 {
		ns.userS += r.cores * r.dt * r.user / t
		ns.sysS += r.cores * r.dt * r.sys / t
	}
	ns.readB += r.readB
	ns.writeB += r.writeB
}

// usage is the node's summary over the measured window.
func (ns *nodeState) usage(interval time.Duration) results.NodeUsage {
	u := results.NodeUsage{Tier: ns.Tier, Node: ns.Name, Role: ns.Role, PID: ns.PID, Source: "proc", Limits: ns.Limits,
		CPUMaxCores: ns.maxCores, CPUUserS: ns.userS, CPUSysS: ns.sysS, PeakRSSBytes: ns.peakRSS,
		ReadBytes: ns.readB, WriteBytes: ns.writeB, MaxThreads: ns.maxThreads, ThrottledS: ns.throttledS, Missing: ns.missing}
	if ns.group != nil {
		u.Source = fmt.Sprintf("cgroup v%d", ns.group.Version)
	}
	if ns.external {
		u.Source, u.OnThisHost = ns.source, ns.onHost
	}
	if ns.samples > 0 {
		u.CPUMeanCores = ns.cpuS / ns.wall
		u.AtLimitShare = float64(ns.atLim) / float64(ns.samples)
	}
	return u
}

// hostState follows the machine's CPU.
type hostState struct {
	busy, total uint64
	have        bool
	n           int
	sum, max    float64
	series      []point
}

// step returns the host's busy cores since the last step.
func (h *hostState) step(busy, total uint64, cpus int) (float64, bool) {
	prevB, prevT, had := h.busy, h.total, h.have
	h.busy, h.total, h.have = busy, total, true
	if !had || total <= prevT {
		return 0, false
	}
	return float64(busy-min(busy, prevB)) / float64(total-prevT) * float64(cpus), true
}

func (h *hostState) account(cores float64, measured bool, mid float64, keep bool) {
	if !measured {
		return
	}
	if keep {
		h.series = append(h.series, point{mid, cores})
	}
	h.n++
	h.sum += cores
	h.max = max(h.max, cores)
}

func (h *hostState) mean() float64 {
	if h.n == 0 {
		return 0
	}
	return h.sum / float64(h.n)
}
