package runner

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/scalelab/scalelab/audit"
	"github.com/scalelab/scalelab/bindcheck"
	"github.com/scalelab/scalelab/liveexport"
	"github.com/scalelab/scalelab/results"
)

// liveWait bounds the wait, after the load, for Prometheus' last scrape of
// --metrics-listen.
const liveWait = 15 * time.Second

// checkLive checks --metrics-listen and --metrics-push before anything
// starts.
func checkLive(f *Options) error {
	if f.MetricsListen != "" {
		host, port, err := net.SplitHostPort(f.MetricsListen)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
			return results.UsageErr("--metrics-listen %q: want HOST:PORT, e.g. 127.0.0.1:9464 (0.0.0.0:9464 for every interface)", f.MetricsListen)
		}
		if host != "" && net.ParseIP(host) == nil && host != "localhost" {
			if _, err := net.LookupHost(host); err != nil {
				return results.UsageErr("--metrics-listen %q: unknown host %s", f.MetricsListen, host)
			}
		}
		if err := bindcheck.Check(f.MetricsListen); err != nil {
			return results.UsageErr("--metrics-listen %s: %v; give a free port (or stop what holds it)", f.MetricsListen, err)
		}
	}
	if f.MetricsPush != "" {
		if err := liveexport.CheckPushURL(f.MetricsPush); err != nil {
			return results.WithCode(results.ExitUsage, err)
		}
	}
	return nil
}

// liveOut is the run's live figures: served, pushed, or both.
type liveOut struct {
	exp  *liveexport.Exporter
	srv  *liveexport.Server
	push *liveexport.Pusher
}

// startLive starts the live figures of a run of ops, when asked; the
// exporter is then one of the collector's sinks.
func (p *Plan) startLive(ops []string, doc *results.Run) (*liveOut, error) {
	f := p.flags
	if f.MetricsListen == "" && f.MetricsPush == "" {
		return nil, nil
	}
	seg := f.Segment
	if seg.Count == 0 {
		seg.Count = 1
	}
	l := &liveOut{exp: liveexport.New(liveexport.Labels{Scenario: p.scen.Name(), Engine: p.eng.Name(),
		Segment: strconv.Itoa(seg.Index), Segments: strconv.Itoa(seg.Count)}, ops)}
	if p.auditCounts != nil {
		l.exp.WatchAudit(p.auditCounts)
	}
	if f.MetricsListen != "" {
		srv, err := liveexport.Serve(f.MetricsListen, l.exp)
		if err != nil {
			return nil, results.WithCode(results.ExitUnfinished, err)
		}
		l.srv = srv
		doc.Live = &results.Live{Listen: srv.Addr()}
		fmt.Fprintf(p.stderr, "live figures at http://%s%s\n", srv.Addr(), liveexport.Path)
	}
	if f.MetricsPush != "" {
		push, err := liveexport.StartPush(f.MetricsPush, l.exp, 0)
		if err != nil {
			l.stop(doc, p)
			return nil, results.WithCode(results.ExitUsage, err)
		}
		l.push = push
		if doc.Live == nil {
			doc.Live = &results.Live{}
		}
		doc.Live.Push = f.MetricsPush
	}
	return l, nil
}

// stop pushes the last figures and waits for a last scrape, then stops.
func (l *liveOut) stop(doc *results.Run, p *Plan) {
	if l == nil {
		return
	}
	if l.push != nil {
		for _, e := range l.push.Stop() {
			w := "--metrics-push: " + e
			doc.Warnings = append(doc.Warnings, w)
			fmt.Fprintf(p.stderr, "warning: %s\n", w)
		}
	}
	if l.srv != nil {
		doc.Live.Scrapes = l.srv.Scrapes()
		if err := l.srv.Close(liveWait, func(s string) { fmt.Fprintln(p.stderr, s) }); err != nil {
			doc.Warnings = append(doc.Warnings, err.Error())
		}
		doc.Live.Scrapes = l.srv.Scrapes()
	}
}

// auditCountsOf is what the live figures read of a run's audit.
func auditCountsOf(a *auditRun) func() audit.LiveCounts {
	if a == nil || a.w == nil {
		return nil
	}
	return a.w.LiveCounts
}
