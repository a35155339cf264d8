package telemetry

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/scalelab/scalelab/results"
)

// External is a node that scalelab did not start and cannot read from
// /proc: its CPU and memory as another system (a Prometheus server) saw
// them over the run.
type External struct {
	Tier, Name, Role string
	Source           string          // what observed it ("prometheus ...")
	Limits           *results.Limits // its CPU limit when known, else nil (never judged at its limit)
	// OnThisHost says the node is a process of this machine (a loopback
	// address): its CPU is the run's share of the host's, not another
	// process's.
	OnThisHost bool
	Points     []ExternalPoint // in time order
}

// ExternalPoint is one observation of an external node: the cores it used
// over the step that ends At, and its memory then (negative: unknown).
type ExternalPoint struct {
	At    time.Time
	Cores float64
	RSS   int64
}

// ExternalStat is one figure an exporter reported about a tier's server
// (as the engines' own stats are), over the run.
type ExternalStat struct {
	Tier, Name string
	Points     []StatPoint
}

// StatPoint is one value of an ExternalStat.
type StatPoint struct {
	At    time.Time
	Value float64
}

// AddExternal adds what another system observed over the run: each node's
// samples go to telemetry.csv and count in the summary and the verdicts
// like the sampled ones (those after Measure and before Stop are the
// measured ones), each figure to engine_stats.csv. Call it after Stop and
// before Summary.
func (s *Sampler) AddExternal(nodes []External, stats []ExternalStat) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.reopen(); err != nil {
		return err
	}
	for _, x := range nodes {
		ns := &nodeState{Node: Node{Tier: x.Tier, Name: x.Name, Role: x.Role, Limits: x.Limits}, source: x.Source, external: true, onHost: x.OnThisHost}
		limit := 0.0
		if x.Limits != nil {
			limit = x.Limits.CPUs
		}
		for i, p := range x.Points {
			if i == 0 {
				ns.peakRSS = max(ns.peakRSS, p.RSS)
				continue
			}
			prev := x.Points[i-1].At
			dt := p.At.Sub(prev).Seconds()
			if dt <= 0 {
				continue
			}
			mid := prev.Add(p.At.Sub(prev) / 2)
			meas := !s.measAt.IsZero() && !mid.Before(s.measAt) && !mid.After(s.stopAt)
			ts := p.At.Sub(s.cfg.Start).Seconds()
			r := row{cores: p.Cores, user: p.Cores, rss: max(p.RSS, 0), dt: dt}
			ns.account(r, meas, limit, ts, s.cfg.Windows)
			s.writeExternalRow(ts, ns, r, p.RSS >= 0, meas)
		}
		s.nodes = append(s.nodes, ns)
	}
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("write telemetry.csv: %w", err)
	}
	if err := s.file.Sync(); err != nil {
		return fmt.Errorf("sync telemetry.csv: %w", err)
	}
	s.file.Close()
	return s.addStats(stats)
}

// openAppend opens a file of the results directory for appending.
func openAppend(dir, name string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	return f, nil
}

// reopen opens telemetry.csv again for appending (Stop closed it).
func (s *Sampler) reopen() error {
	f, err := openAppend(s.cfg.Dir, results.TelemetryFile)
	if err != nil {
		return err
	}
	s.file = f
	s.w.Reset(f)
	return nil
}

func (s *Sampler) writeExternalRow(ts float64, ns *nodeState, r row, rss, meas bool) {
	b := rowStart(make([]byte, 0, 120), ts, ns)
	b = append(b, ",0,"...)
	b = strconv.AppendFloat(b, r.cores, 'f', 4, 64)
	b = append(b, ",,,"...)
	if rss {
		b = strconv.AppendInt(b, r.rss, 10)
	}
	b = append(b, ",,,,,"...)
	b = strconv.AppendBool(b, meas)
	b = append(b, '\n')
	s.w.Write(b)
}

// addStats writes the exporters' figures to engine_stats.csv and adds
// them to what the summary keeps.
func (s *Sampler) addStats(stats []ExternalStat) error {
	if len(stats) == 0 {
		return nil
	}
	f, err := openAppend(s.cfg.Dir, results.EngineStatsFile)
	if err != nil {
		return err
	}
	defer f.Close()
	if st, _ := f.Stat(); st != nil && st.Size() == 0 {
		f.WriteString(StatsHeader)
	}
	seen := map[string]*results.EngineStat{}
	var order []string
	for _, x := range stats {
		for _, p := range x.Points {
			fmt.Fprintf(f, "%.3f,%s,%s,%s\n", p.At.Sub(s.cfg.Start).Seconds(), x.Tier, x.Name, strconv.FormatFloat(p.Value, 'g', -1, 64))
			key := x.Tier + "\x00" + x.Name
			if e := seen[key]; e == nil {
				seen[key] = &results.EngineStat{Tier: x.Tier, Name: x.Name, First: p.Value, Last: p.Value, Max: p.Value}
				order = append(order, key)
			} else {
				e.Last, e.Max = p.Value, max(e.Max, p.Value)
			}
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync engine_stats.csv: %w", err)
	}
	if s.statsSum == nil {
		s.statsSum = &statsSummary{}
	}
	var add []results.EngineStat
	for _, k := range order {
		add = append(add, *seen[k])
	}
	sort.SliceStable(add, func(i, j int) bool { return Moved(add[i]) > Moved(add[j]) })
	for i, e := range add {
		if i < keepStats && Moved(e) > 0 || Alarming(e.Name) && e.Last > e.First {
			s.statsSum.stats = append(s.statsSum.stats, e)
		}
	}
	return nil
}
