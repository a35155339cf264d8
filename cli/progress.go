package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"github.com/scalelab/scalelab/load"
	"github.com/scalelab/scalelab/metrics"
)

// progress shows a progress bar and a live line (ops/s, p99, errors) on a
// terminal, a plain line every 5 s elsewhere, or nothing. It is a metrics
// sink: the live figures come from the last closed interval.
type progress struct {
	w    io.Writer
	mode string // bar, lines or off

	loadTotal int64
	loadDone  atomic.Int64

	mu     sync.Mutex
	live   string
	opts   load.Options
	run    *load.Run
	coll   *metrics.Collector
	stop   chan struct{}
	done   chan struct{}
	active bool

	estimated bool // the time of a run bounded by operations was said
}

func newProgress(w io.Writer, mode string) *progress {
	if mode == "auto" || mode == "" {
		mode = "lines"
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) && os.Getenv("CI") == "" {
			mode = "bar"
		}
	}
	if mode != "bar" && mode != "lines" {
		mode = "off"
	}
	return &progress{w: w, mode: mode}
}

// DataLoadStarted shows the load phase.
func (p *progress) DataLoadStarted(total int64) {
	p.loadTotal = total
	p.loadDone.Store(0)
	p.begin("loading", func() (float64, string) {
		n := p.loadDone.Load()
		return float64(n) / float64(max(total, 1)), fmt.Sprintf("%s/%s items", count(n), count(total))
	})
}

// Loaded counts loaded items.
func (p *progress) DataLoaded(n int64) { p.loadDone.Add(n) }

// DataLoadDone ends the load display.
func (p *progress) DataLoadDone() { p.end() }

// RunStarted shows the measured run.
func (p *progress) RunStarted(opts load.Options, run *load.Run, coll *metrics.Collector) {
	p.opts, p.run, p.coll = opts, run, coll
	p.begin("running", func() (float64, string) {
		el := coll.Elapsed()
		var frac float64
		var pos string
		if opts.Duration > 0 {
			frac = el.Seconds() / opts.Duration.Seconds()
			pos = fmt.Sprintf("%s/%s", fmtDur(el.Truncate(100*time.Millisecond)), opts.Duration)
		}
		if opts.Ops > 0 {
			if of := float64(run.Claimed()) / float64(opts.Ops); of > frac {
				frac = of
			}
			pos = strings.TrimSpace(pos + " " + fmt.Sprintf("%s/%s ops", count(run.Claimed()), count(opts.Ops)))
			p.estimateOnce(opts.Ops, el, run.Claimed())
		}
		rem, known := load.Remaining(opts, el, run.Claimed())
		if done, total, ok := load.LoopProgress(run); ok && total > 0 {
			frac = max(frac, float64(done)/float64(total))
			pos = strings.TrimSpace(pos + " " + fmt.Sprintf("%s/%s loops", count(done), count(total)))
			if byLoops, ok := load.LoopsRemaining(el, done, total); ok && (!known || byLoops < rem) {
				rem, known = byLoops, true
			}
		}
		if known {
			pos += "  ETA " + rem.Round(time.Second).String()
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		return frac, pos + "  " + p.live
	})
}

// estimateOnce prints, once 5 s of a run bounded by operations have shown
// its rate, how long the whole run will take at that rate.
func (p *progress) estimateOnce(ops int64, el time.Duration, done int64) {
	if p.estimated || el < 5*time.Second {
		return
	}
	if msg, ok := load.OpsEstimate(ops, el, done); ok {
		p.estimated = true
		if p.mode == "bar" {
			fmt.Fprintf(p.w, "\r\033[K%s\n", msg)
		} else {
			fmt.Fprintln(p.w, msg)
		}
	}
}

// RunDone ends the run display.
func (p *progress) RunDone() { p.end() }

// Interval updates the live line from a closed interval.
func (p *progress) Interval(iv *metrics.Interval) error {
	secs := float64(iv.EndNs-iv.StartNs) / 1e9
	if secs < 0.5 { // the short tail at the stop says little about the rate
		return nil
	}
	var n, errs int64
	var worst *float64
	for i := range iv.Ops {
		o := &iv.Ops[i]
		if p.coll != nil && !p.coll.InTotal(o.Name) {
			continue // as in the summary's total
		}
		n += o.Count()
		errs += o.Errors()
		if v := metrics.PercentileMs(o.Lat, 99); v != nil && (worst == nil || *v > *worst) {
			worst = v
		}
	}
	p99 := "p99 -"
	if worst != nil {
		p99 = fmt.Sprintf("p99 %.3gms", *worst)
	}
	line := fmt.Sprintf("%s ops/s  %s  errors %d", count(int64(float64(n)/secs)), p99, errs)
	if iv.Sessions > 0 {
		line += fmt.Sprintf("  sessions %d", iv.Sessions)
	}
	if f := iv.InFlight; f != nil {
		line += fmt.Sprintf("  in flight %.2f (max %d)", f.Mean, f.Max)
	}
	if iv.Warmup {
		line += "  (warm-up)"
	}
	p.mu.Lock()
	p.live = line
	p.mu.Unlock()
	return nil
}

// begin starts redrawing with status until end.
func (p *progress) begin(label string, status func() (float64, string)) {
	if p.mode == "off" {
		return
	}
	p.stop, p.done, p.active = make(chan struct{}), make(chan struct{}), true
	every := 200 * time.Millisecond
	if p.mode == "lines" {
		every = 5 * time.Second
	}
	go func() {
		defer close(p.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				if p.mode == "bar" {
					frac, text := status()
					fmt.Fprintf(p.w, "\r\033[K%s %s %s\n", label, bar(frac), text)
				}
				return
			case <-t.C:
				frac, text := status()
				if p.mode == "bar" {
					fmt.Fprintf(p.w, "\r\033[K%s %s %s", label, bar(frac), text)
				} else {
					fmt.Fprintf(p.w, "%s %3.0f%% %s\n", label, 100*min(frac, 1), text)
				}
			}
		}
	}()
}

func (p *progress) end() {
	if !p.active {
		return
	}
	close(p.stop)
	<-p.done
	p.active = false
}

func bar(frac float64) string {
	const width = 24
	frac = min(max(frac, 0), 1)
	n := int(frac * width)
	return fmt.Sprintf("[%s%s] %3.0f%%", strings.Repeat("=", n), strings.Repeat(" ", width-n), frac*100)
}

// count formats n with thousands separators.
func count(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
