// Package telemetry samples, during a run, the CPU, memory, disk I/O and
// threads of every process of the run's tiers that scalelab started (and
// of scalelab itself and the host) from /proc and cgroup files, and what
// the engines report about themselves; it streams both to the results
// directory and judges which tier saturated.
package telemetry

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/scalelab/scalelab/cluster/cgroup"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/results"
)

// Tier names of processes that are not a store, cache or app node.
const (
	TierGenerator = "generator" // scalelab itself
	TierHost      = "host"      // every process of the machine
)

// Node is one process to sample: a node of a tier scalelab started.
type Node struct {
	Tier, Name, Role string
	PID              int
	Cgroup           string          // the node's cgroup path when confined, else ""
	Limits           *results.Limits // what confines it, or nil
	// Refresh, when set, returns the node's current PID once its process
	// is gone (a restarted node has a new one); 0 when it has none.
	Refresh func() int
}

// Source is an engine connection that reports stats about its server.
type Source struct {
	Tier    string
	Sampler engine.StatsSampler
}

// Config says what to sample, how often, and where to write.
type Config struct {
	Nodes         []Node
	Sources       []Source
	Dir           string        // results directory
	Start         time.Time     // t = 0 of the files
	Interval      time.Duration // process sampling; 1 s when zero
	StatsInterval time.Duration // engine stats; 5 s when zero
	ProcDir       string        // "/proc" when empty
	// EmbeddedStore names the store engine that runs inside scalelab
	// (sqlite): the generator's figures include it.
	EmbeddedStore string
	// Windows keeps every measured sample's CPU (16 bytes a node a
	// sample) for JudgeWindows; without it the sampler's memory does not
	// grow with the run's length.
	Windows bool
}

// Sampler samples until Stop.
type Sampler struct {
	cfg      Config
	cpus     int
	file     *os.File
	w        *bufio.Writer
	stats    *statsLoop
	statsSum *statsSummary
	nodes    []*nodeState
	self     *nodeState
	host     hostState
	mu       sync.Mutex
	meas     bool // warm-up over: samples count in the summary
	measAt   time.Time
	stopAt   time.Time
	ticks    int
	errs     []string
	cost     time.Duration // the sampling goroutine's CPU
	stop     chan struct{}
	done     chan struct{}
	lastAt   time.Time
	synced   time.Time
	blind    []results.Unobserved
	sources  []results.TelemetrySource
}

// SetObserved records the external systems the tiers were read from and
// the tiers nothing observed, for Summary and JudgeWindows: a verdict
// with an unobserved tier says it cannot know.
func (s *Sampler) SetObserved(sources []results.TelemetrySource, unobserved []results.Unobserved) {
	s.mu.Lock()
	s.sources, s.blind = sources, unobserved
	s.mu.Unlock()
}

// Start creates the files, takes the first sample and samples every
// Interval until Stop. Errors reading a process never stop it; they are
// recorded.
func Start(cfg Config) (*Sampler, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.StatsInterval <= 0 {
		cfg.StatsInterval = 5 * time.Second
	}
	if cfg.ProcDir == "" {
		cfg.ProcDir = "/proc"
	}
	f, err := os.OpenFile(filepath.Join(cfg.Dir, results.TelemetryFile), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	s := &Sampler{cfg: cfg, cpus: runtime.NumCPU(), file: f, w: bufio.NewWriter(f), stop: make(chan struct{}), done: make(chan struct{})}
	s.w.WriteString(Header)
	for _, n := range cfg.Nodes {
		ns := &nodeState{Node: n, skip: map[int]bool{}}
		if n.Cgroup != "" {
			g, err := cgroup.Open(n.Cgroup)
			if err != nil {
				s.errs = append(s.errs, fmt.Sprintf("%s %s: cgroup %s: %v; sampling its processes instead", n.Tier, n.Name, n.Cgroup, err))
			} else {
				ns.group = g
			}
		}
		s.nodes = append(s.nodes, ns)
	}
	for _, ns := range s.nodes {
		for _, o := range s.nodes {
			if o != ns {
				ns.skip[o.PID] = true
			}
		}
	}
	s.self = &nodeState{Node: Node{Tier: TierGenerator, Name: "scalelab", PID: os.Getpid()}, selfOnly: true}
	if cfg.EmbeddedStore != "" {
		s.self.Role = "generator with the embedded " + cfg.EmbeddedStore + " store"
	}
	if len(cfg.Sources) > 0 {
		s.stats, err = startStats(cfg)
		if err != nil {
			f.Close()
			return nil, err
		}
	}
	s.sample(time.Now())
	go s.loop()
	return s, nil
}

// Header is the first line of telemetry.csv.
const Header = "t_s,tier,node,pid,cpu_cores,user_cores,sys_cores,rss_bytes,read_bytes_per_s,write_bytes_per_s,threads,throttled_share,measured\n"

// Measure marks the end of the warm-up: later samples count in the
// summary.
func (s *Sampler) Measure() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.meas = true
	s.measAt = time.Now()
	s.ioEdges(false)
}

// ioEdges reads every node's I/O counters at the start (end false) or the
// end of the measured window (nodeState.ioEdge); s.mu is held.
func (s *Sampler) ioEdges(end bool) {
	snap, err := takeSnapshot(s.cfg.ProcDir)
	if err != nil {
		s.addErr(err.Error())
		return
	}
	for _, ns := range append(s.nodes, s.self) {
		ns.ioEdge(s.cfg.ProcDir, snap, end)
	}
}

func (s *Sampler) loop() {
	defer close(s.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			before := threadCPU()
			s.sample(now)
			s.mu.Lock()
			s.cost += threadCPU() - before
			s.mu.Unlock()
		}
	}
}

// threadCPU is the calling OS thread's CPU time so far.
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sample reads every node once and writes a row for each.
func (s *Sampler) sample(now time.Time) {
	snap, err := takeSnapshot(s.cfg.ProcDir)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.addErr(err.Error())
		return
	}
	ts := now.Sub(s.cfg.Start).Seconds()
	first := s.lastAt.IsZero()
	prevAt := s.lastAt
	s.lastAt = now
	if !first && s.meas {
		s.ticks++
	}
	for _, ns := range append(s.nodes, s.self) {
		r, ok := ns.read(s, snap, now)
		if !ok || first {
			continue
		}
		ns.account(r, s.meas, s.limitOf(ns), ts, s.cfg.Windows)
		s.writeRow(ts, ns, r)
	}
	if busy, total, err := hostCPU(s.cfg.ProcDir); err != nil {
		s.addErr(err.Error())
	} else if r, ok := s.host.step(busy, total, s.cpus); ok && !first {
		s.host.account(r, s.meas, ts-now.Sub(prevAt).Seconds()/2, s.cfg.Windows)
		fmt.Fprintf(s.w, "%.3f,%s,cpu,0,%.4f,,,,,,,,%t\n", ts, TierHost, r, s.meas)
	}
	s.flush(now)
}

// syncEvery is how often the streamed files are synced to disk (as
// series.csv is); every tick reaches the kernel at once.
const syncEvery = 5 * time.Second

// flush writes the tick's rows, and syncs when due.
func (s *Sampler) flush(now time.Time) {
	if err := s.w.Flush(); err != nil {
		s.addErr("write telemetry.csv: " + err.Error())
		return
	}
	if now.Sub(s.synced) >= syncEvery {
		s.synced = now
		if err := s.file.Sync(); err != nil {
			s.addErr("sync telemetry.csv: " + err.Error())
		}
	}
}

// limitOf is the CPU a node can use at most: its limit, or the host's
// (an external node without a known limit has none: 0).
func (s *Sampler) limitOf(ns *nodeState) float64 {
	if ns.Limits != nil && ns.Limits.CPUs > 0 {
		return ns.Limits.CPUs
	}
	if ns.external {
		return 0
	}
	return float64(s.cpus)
}

// rowStart appends to b the first columns of a telemetry.csv row: the
// time, the node's tier and its name.
func rowStart(b []byte, ts float64, ns *nodeState) []byte {
	b = strconv.AppendFloat(b, ts, 'f', 3, 64)
	b = append(b, ',')
	b = append(b, ns.Tier...)
	b = append(b, ',')
	return append(b, ns.Name...)
}

func (s *Sampler) writeRow(ts float64, ns *nodeState, r row) {
	b := rowStart(make([]byte, 0, 160), ts, ns)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(ns.PID), 10)
	for _, v := range []float64{r.cores, r.user, r.sys} {
		b = append(b, ',')
		b = strconv.AppendFloat(b, v, 'f', 4, 64)
	}
	b = append(b, ',')
	b = strconv.AppendInt(b, r.rss, 10)
	for _, v := range []float64{r.readPerS, r.writePerS} {
		b = append(b, ',')
		b = strconv.AppendFloat(b, v, 'f', 0, 64)
	}
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.threads), 10)
	b = append(b, ',')
	if ns.group != nil {
		b = strconv.AppendFloat(b, r.throttled, 'f', 3, 64)
	}
	b = append(b, ',')
	b = strconv.AppendBool(b, s.meas)
	b = append(b, '\n')
	s.w.Write(b)
}

// addErr records a sampling error (the first few distinct ones).
func (s *Sampler) addErr(e string) {
	for _, x := range s.errs {
		if x == e {
			return
		}
	}
	if len(s.errs) < 10 {
		s.errs = append(s.errs, e)
	}
}

// Stop takes a last engine-stats sample and closes the files.
func (s *Sampler) Stop() {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	s.stopAt = time.Now()
	if s.meas {
		s.ioEdges(true)
	}
	s.mu.Unlock()
	if s.stats != nil {
		s.statsSum = s.stats.stop()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.w.Flush(); err != nil {
		s.addErr("write telemetry.csv: " + err.Error())
	}
	if err := s.file.Sync(); err != nil {
		s.addErr("sync telemetry.csv: " + err.Error())
	}
	s.file.Close()
}

// Summary is the stopped sampler's summary; ops is the number of measured
// operations.
func (s *Sampler) Summary(ops int64) *results.Telemetry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.summary(ops, s.statsSum)
}

// tierOrder sorts tiers: store first, the generator last.
func tierOrder(t string) int {
	switch t {
	case "store":
		return 0
	case TierGenerator:
		return 9
	}
	return 5
}

func (s *Sampler) summary(ops int64, st *statsSummary) *results.Telemetry {
	t := &results.Telemetry{IntervalS: s.cfg.Interval.Seconds(), Samples: s.ticks, HostCPUs: s.cpus, Errors: s.errs}
	t.HostCPUMean, t.HostCPUMax = s.host.mean(), s.host.max
	t.Unobserved, t.Sources = s.blind, s.sources
	tiers := map[string]*results.TierUsage{}
	tierSum := map[string]map[int]float64{} // tier -> tick -> cores
	var order []string
	all := append(append([]*nodeState{}, s.nodes...), s.self)
	sampled := map[string]bool{}
	for _, ns := range all {
		sampled[ns.Tier] = sampled[ns.Tier] || ns.samples > 0
	}
	for _, ns := range all {
		if !sampled[ns.Tier] {
			// no figure at all: said as such, not as zeros
			if !slices.Contains(t.NoSamples, ns.Tier) {
				t.NoSamples = append(t.NoSamples, ns.Tier)
			}
			continue
		}
		u := ns.usage(s.cfg.Interval)
		t.Nodes = append(t.Nodes, u)
		tu := tiers[ns.Tier]
		if tu == nil {
			tu = &results.TierUsage{Tier: ns.Tier}
			tiers[ns.Tier] = tu
			tierSum[ns.Tier] = map[int]float64{}
			order = append(order, ns.Tier)
		}
		tu.Nodes++
		tu.CPUMeanCores += u.CPUMeanCores
		tu.PeakRSSBytes += u.PeakRSSBytes
		if ops > 0 {
			tu.CPUPerOpUs += (u.CPUUserS + u.CPUSysS) / float64(ops) * 1e6
		}
		for i, c := range ns.perTick {
			tierSum[ns.Tier][i] += c
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return tierOrder(order[i]) < tierOrder(order[j]) })
	for _, name := range order {
		tu := tiers[name]
		for _, c := range tierSum[name] {
			tu.CPUMaxCores = max(tu.CPUMaxCores, c)
		}
		t.Tiers = append(t.Tiers, *tu)
	}
	wall := time.Duration(s.ticks) * s.cfg.Interval
	local := 1
	for _, ns := range s.nodes {
		if !ns.external {
			local++
		}
	}
	t.Cost = &results.Cost{CPUS: s.cost.Seconds(), SampledNodes: local}
	if s.ticks > 0 {
		t.Cost.PerSampleMs = s.cost.Seconds() * 1e3 / float64(s.ticks)
	}
	if wall > 0 {
		t.Cost.ShareOfCore = s.cost.Seconds() / wall.Seconds()
	}
	if st != nil {
		t.EngineStats, t.EngineErrors, t.Cost.EngineSamples = st.stats, st.errors, st.samples
	}
	judge(t, wholeRun)
	return t
}

// StatsContext bounds one engine-stats call.
func statsContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 3*time.Second)
}
