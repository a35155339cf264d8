package telemetry

import (
	"bufio"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/scalelab/scalelab/results"
)

// StatsHeader is the first line of engine_stats.csv.
const StatsHeader = "t_s,tier,name,value\n"

// keepStats is how many of the figures that moved most run.json keeps
// (engine_stats.csv has them all).
const keepStats = 16

// statsLoop samples the engines' own figures every StatsInterval.
type statsLoop struct {
	cfg     Config
	file    *os.File
	w       *bufio.Writer
	mu      sync.Mutex
	seen    map[string]*results.EngineStat // tier + "\x00" + name
	errs    map[string]int
	samples int
	synced  time.Time
	stopC   chan struct{}
	done    chan struct{}
}

// statsSummary is what the loop hands to the summary.
type statsSummary struct {
	stats   []results.EngineStat
	errors  []string
	samples int
}

func startStats(cfg Config) (*statsLoop, error) {
	f, err := os.OpenFile(filepath.Join(cfg.Dir, results.EngineStatsFile), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	l := &statsLoop{cfg: cfg, file: f, w: bufio.NewWriter(f), seen: map[string]*results.EngineStat{}, errs: map[string]int{},
		stopC: make(chan struct{}), done: make(chan struct{})}
	l.w.WriteString(StatsHeader)
	l.sample()
	go l.loop()
	return l, nil
}

func (l *statsLoop) loop() {
	defer close(l.done)
	t := time.NewTicker(l.cfg.StatsInterval)
	defer t.Stop()
	for {
		select {
		case <-l.stopC:
			return
		case <-t.C:
			l.sample()
		}
	}
}

// sample asks every source once and writes what they said.
func (l *statsLoop) sample() {
	for _, src := range l.cfg.Sources {
		ctx, cancel := statsContext()
		m, err := src.Sampler.SampleStats(ctx)
		cancel()
		ts := time.Since(l.cfg.Start).Seconds()
		l.mu.Lock()
		l.samples++
		if err != nil {
			l.errs[fmt.Sprintf("%s: %v", src.Tier, err)]++
			l.mu.Unlock()
			continue
		}
		names := slices.Sorted(maps.Keys(m))
		for _, k := range names {
			v := m[k]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			fmt.Fprintf(l.w, "%.3f,%s,%s,%s\n", ts, src.Tier, k, strconv.FormatFloat(v, 'g', -1, 64))
			key := src.Tier + "\x00" + k
			if e := l.seen[key]; e == nil {
				l.seen[key] = &results.EngineStat{Tier: src.Tier, Name: k, First: v, Last: v, Max: v}
			} else {
				e.Last, e.Max = v, max(e.Max, v)
			}
		}
		_ = l.w.Flush()
		if time.Since(l.synced) >= syncEvery {
			l.synced = time.Now()
			_ = l.file.Sync()
		}
		l.mu.Unlock()
	}
}

// stop takes a last sample, closes the file and returns the figures that
// moved most, every rejection or drop that grew, and the errors.
func (l *statsLoop) stop() *statsSummary {
	close(l.stopC)
	<-l.done
	l.sample()
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.w.Flush()
	_ = l.file.Sync()
	l.file.Close()
	out := &statsSummary{samples: l.samples}
	var all []results.EngineStat
	for _, e := range l.seen {
		all = append(all, *e)
	}
	sort.Slice(all, func(i, j int) bool {
		mi, mj := Moved(all[i]), Moved(all[j])
		if mi != mj {
			return mi > mj
		}
		return all[i].Name < all[j].Name
	})
	for i, e := range all {
		queue := (strings.HasSuffix(e.Name, ".queue") || strings.HasSuffix(e.Name, ".pending")) && e.Max >= queueBacklog
		if i < keepStats && Moved(e) > 0 || Alarming(e.Name) && e.Last > e.First || queue {
			out.stats = append(out.stats, e)
		}
	}
	for e, n := range l.errs {
		out.errors = append(out.errors, fmt.Sprintf("%s (%d of %d samples)", e, n, l.samples))
	}
	sort.Strings(out.errors)
	return out
}

// Moved is how much a figure changed over the run, relative to where it
// started (a counter from 0 to 10 moved 10, from 1000 to 1010 moved 0.01).
func Moved(e results.EngineStat) float64 {
	d := math.Abs(e.Last - e.First)
	if d == 0 {
		d = math.Abs(e.Max - e.First)
	}
	return d / math.Max(math.Abs(e.First), 1)
}

// Alarming reports whether a figure counts refused or lost work: thread
// pool rejections, dropped messages, blocked tasks, deadlocks.
func Alarming(name string) bool {
	for _, w := range []string{"rejected", "dropped", "blocked", "deadlocks"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// ReadEngineStats reads engine_stats.csv back: every figure with its first,
// last and highest value, keyed by "tier/name". A torn last line is
// ignored.
func ReadEngineStats(path string) (map[string]results.EngineStat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read engine stats: %w", err)
	}
	out := map[string]results.EngineStat{}
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ",")
		if i == 0 || len(f) != 4 {
			continue
		}
		v, err := strconv.ParseFloat(f[3], 64)
		if err != nil {
			continue
		}
		k := f[1] + "/" + f[2]
		e, ok := out[k]
		if !ok {
			e = results.EngineStat{Tier: f[1], Name: f[2], First: v, Max: v}
		}
		e.Last, e.Max = v, max(e.Max, v)
		out[k] = e
	}
	return out, nil
}
