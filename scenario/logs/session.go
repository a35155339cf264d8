package logs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/kit"
)

// Session is one user of the logs workload. Next chooses the operation and
// its arguments and computes the answer the ground truth expects (untimed);
// Do runs it and checks the answer.
type Session struct {
	w        *Workload
	v        view
	r        *rand.Rand
	quota    kit.SessionOps
	prepared bool
	op       int

	// Arguments of the prepared operation.
	id                 int64 // read
	a, a1, m, svc, sev int   // timestamp index (a..a1 for errors_per_host), machine, service, severity
	word               int
	// Expected answers: over the acknowledged prefix when Next ran (lo),
	// and over the records present before the run (loBase), which is what
	// a replica is sure to have.
	lo, loBase         int64
	hostLo, hostLoBase [NumMachines]int64

	rec, got Record
	buf      []byte
	batch    []Record
	hosts    map[string]int64

	// Freshness probe between logs.freshness_write and logs.freshness.
	probe       int64
	lastAck     int64   // metrics.Now of the probe's last acknowledged write
	writeRate   float64 // records per second the probe's writes achieved
	pollPending bool

	wlog scenario.WriteLog // acknowledged-write audit (audit.go); nil when off
}

var (
	_ scenario.Session = (*Session)(nil)
	_ scenario.Thinker = (*Session)(nil)
)

// NewSession returns a session whose choices derive from seed alone.
func (w *Workload) NewSession(id uint64, seed uint64) scenario.Session {
	return w.newSession(seed)
}

func (w *Workload) newSession(seed uint64) *Session {
	return &Session{w: w, v: w.st.newView(), r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), quota: kit.NewSessionOps(w.cfg.sessionOps)}
}

// Next chooses the next operation. After logs.freshness_write it is always
// logs.freshness, which polls for the probe's records (and does not count
// towards logs.session_ops).
func (s *Session) Next() (op int, ok bool) {
	if s.pollPending {
		s.op, s.prepared = OpFreshness, true
		return OpFreshness, true
	}
	if !s.quota.Take() {
		return 0, false
	}
	w := s.w
	op = w.ops.NextU(s.r.Float64())
	s.op, s.prepared = op, true
	prefix := w.ids.prefix.Load()
	// The records known to be stored: 0..base-1 (before the run) and
	// start..prefix-1 (this process's acknowledged writes; start is base
	// unless this is a segment of a divided test). A ground truth over
	// them is truth(base) + truth(prefix) - truth(start).
	known := func(truth func(n int64) int64) int64 { return truth(w.base) + truth(prefix) - truth(w.start) }
	switch op {
	case OpRead:
		s.id = -1
		if n := w.base + prefix - w.start; n > 0 {
			s.id = s.r.Int64N(n)
			if s.id >= w.base {
				s.id += w.start - w.base
			}
		}
	case OpCountA:
		s.a = s.r.IntN(NumTimestamps)
		s.lo, s.loBase = known(func(n int64) int64 { return CountA(s.a, n) }), CountA(s.a, w.base)
	case OpCountB:
		s.a, s.m = s.r.IntN(NumTimestamps), s.r.IntN(NumMachines)
		s.lo, s.loBase = known(func(n int64) int64 { return CountB(s.a, s.m, n) }), CountB(s.a, s.m, w.base)
	case OpCountC:
		s.a, s.svc, s.sev = s.r.IntN(NumTimestamps), s.r.IntN(NumServices), s.r.IntN(MaxSeverity+1)
		s.lo, s.loBase = known(func(n int64) int64 { return CountC(s.a, s.svc, s.sev, n) }), CountC(s.a, s.svc, s.sev, w.base)
	case OpErrorsPerHost:
		s.a = s.r.IntN(NumTimestamps - w.cfg.span + 1)
		s.a1 = s.a + w.cfg.span - 1
		base, pre, start := ErrorsPerHost(s.a, s.a1, w.base), ErrorsPerHost(s.a, s.a1, prefix), ErrorsPerHost(s.a, s.a1, w.start)
		for m := range s.hostLo {
			s.hostLo[m] = base[m] + pre[m] - start[m]
		}
		s.hostLoBase = base
	case OpSearch:
		s.word = s.r.IntN(NumWords)
		s.lo, s.loBase = known(func(n int64) int64 { return Search(s.word, n) }), Search(s.word, w.base)
	}
	return op, true
}

// Think makes the freshness poll start right after the probe's writes, so
// that its latency is the freshness delay; other operations take the load
// model's think time.
func (s *Session) Think() (time.Duration, bool) {
	if s.op == OpFreshness && s.prepared {
		return 0, true
	}
	return 0, false
}

// errNotPrepared is returned by Do without a preceding Next.
var errNotPrepared = errors.New("logs: Session.Do called without Next")

// Do performs the operation Next prepared. A count that no correct store
// could return, a record that differs from the generated one, or an
// acknowledged record that the primary does not have wraps
// engine.ErrIntegrity.
func (s *Session) Do(ctx context.Context) error {
	if !s.prepared {
		return errNotPrepared
	}
	s.prepared = false
	var err error
	switch s.op {
	case OpWrite:
		err = s.write(ctx)
	case OpWriteBulk:
		err = s.writeBulk(ctx)
	case OpRead:
		err = s.read(ctx)
	case OpCountA:
		ts := Timestamp(s.a)
		n, primary, qerr := s.v.countA(ctx, ts)
		err = s.check(qerr, n, primary, func(n int64) int64 { return CountA(s.a, n) }, "timestamp %d", ts)
	case OpCountB:
		ts := Timestamp(s.a)
		n, primary, qerr := s.v.countB(ctx, ts, machines[s.m])
		err = s.check(qerr, n, primary, func(n int64) int64 { return CountB(s.a, s.m, n) }, "timestamp %d, machine %s", ts, machines[s.m])
	case OpCountC:
		ts := Timestamp(s.a)
		n, primary, qerr := s.v.countC(ctx, ts, services[s.svc], s.sev)
		err = s.check(qerr, n, primary, func(n int64) int64 { return CountC(s.a, s.svc, s.sev, n) }, "timestamp %d, service %s, severity %d", ts, services[s.svc], s.sev)
	case OpErrorsPerHost:
		err = s.errorsPerHost(ctx)
	case OpSearch:
		n, primary, qerr := s.v.search(ctx, words[s.word])
		err = s.check(qerr, n, primary, func(n int64) int64 { return Search(s.word, n) }, "word %q", words[s.word])
	case OpFreshnessWrite:
		err = s.freshnessWrite(ctx)
	case OpFreshness:
		err = s.freshnessPoll(ctx)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", operationNames[s.op], err)
	}
	return nil
}

// check compares a count with the ground truth: at least the count over
// the records the answering server is sure to have (lo), at most the count
// over every record a write has started for.
func (s *Session) check(err error, got int64, primary bool, truth func(n int64) int64, format string, args ...any) error {
	if err != nil {
		return err
	}
	lo := s.lo
	if !primary {
		lo = s.loBase
	}
	if got == lo {
		return nil
	}
	hi := s.w.upper(truth)
	if got >= lo && got <= hi {
		return nil
	}
	what := fmt.Sprintf(format, args...)
	if lo == hi {
		return fmt.Errorf("%w: %s: %d records, want %d", engine.ErrIntegrity, what, got, lo)
	}
	return fmt.Errorf("%w: %s: %d records, want %d to %d (writes in flight)", engine.ErrIntegrity, what, got, lo, hi)
}

func (s *Session) write(ctx context.Context) error {
	ids := &s.w.ids
	id := ids.take(1)
	s.buf = fill(&s.rec, id, s.buf)
	if s.wlog != nil {
		s.wlog.Writing(id, 1)
	}
	if err := s.w.st.insert(ctx, &s.rec); err != nil {
		ids.failed(id)
		return fmt.Errorf("record %d: %w", id, err)
	}
	ids.done(id, 1)
	s.v.wrote()
	return nil
}

func (s *Session) writeBulk(ctx context.Context) error {
	ids := &s.w.ids
	n := int64(s.w.cfg.batch)
	start := ids.take(n)
	if cap(s.batch) < int(n) {
		s.batch = make([]Record, n)
	}
	s.batch = s.batch[:n]
	for i := range s.batch {
		s.buf = fill(&s.batch[i], start+int64(i), s.buf)
	}
	if s.wlog != nil {
		s.wlog.Writing(start, int(n))
	}
	if err := s.w.st.insertBatch(ctx, s.batch); err != nil {
		ids.failed(start)
		return fmt.Errorf("records %d..%d: %w", start, start+n-1, err)
	}
	ids.done(start, n)
	s.v.wrote()
	return nil
}

func (s *Session) read(ctx context.Context) error {
	if s.id < 0 {
		return fmt.Errorf("no record stored yet: %w", engine.ErrNotFound)
	}
	found, primary, err := s.v.read(ctx, s.id, &s.got)
	if err != nil {
		return fmt.Errorf("record %d: %w", s.id, err)
	}
	if !found {
		if primary || s.id < s.w.base {
			return fmt.Errorf("%w: record %d was acknowledged but is missing", engine.ErrIntegrity, s.id)
		}
		// A replica that has not replayed the write yet.
		return fmt.Errorf("record %d not on the replica yet: %w", s.id, engine.ErrNotFound)
	}
	s.buf = fill(&s.rec, s.id, s.buf)
	if s.got != s.rec {
		return fmt.Errorf("%w: record %d is %+v, want %+v", engine.ErrIntegrity, s.id, clip(s.got), clip(s.rec))
	}
	return nil
}

// clip shortens a record's message for an error message.
func clip(r Record) Record {
	if len(r.Message) > 60 {
		r.Message = r.Message[:60] + "..."
	}
	return r
}

func (s *Session) errorsPerHost(ctx context.Context) error {
	if s.hosts == nil {
		s.hosts = make(map[string]int64, NumMachines)
	}
	clear(s.hosts)
	from, to := Timestamp(s.a), Timestamp(s.a1)
	primary, err := s.v.errorsPerHost(ctx, from, to, ErrorSeverity, s.hosts)
	if err != nil {
		return err
	}
	lo := &s.hostLo
	if !primary {
		lo = &s.hostLoBase
	}
	exact := len(s.hosts) <= NumMachines
	for m, name := range machines {
		if s.hosts[name] != lo[m] {
			exact = false
			break
		}
	}
	if exact {
		return nil
	}
	var hi [NumMachines]int64
	if s.w.seg.Split() {
		for m := range hi {
			hi[m] = math.MaxInt64 // other segments' writes are unknown here
		}
	} else {
		hi = ErrorsPerHost(s.a, s.a1, s.w.ids.issued.Load())
	}
	known := 0
	for m, name := range machines {
		got, ok := s.hosts[name]
		if ok {
			known++
		}
		if got < lo[m] || got > hi[m] {
			return fmt.Errorf("%w: timestamps %d..%d, severity <= %d: machine %s has %d records, want %d to %d", engine.ErrIntegrity, from, to, ErrorSeverity, name, got, lo[m], hi[m])
		}
	}
	if known != len(s.hosts) {
		return fmt.Errorf("%w: timestamps %d..%d: the answer names machines that never logged: %v", engine.ErrIntegrity, from, to, s.hosts)
	}
	return nil
}

// freshnessWrite writes the probe's records, all with one new timestamp,
// at logs.freshness_rate from logs.freshness_writers concurrent writers,
// and notes when the last write was acknowledged.
func (s *Session) freshnessWrite(ctx context.Context) error {
	w, cfg := s.w, s.w.cfg
	// probe numbers are dealt round robin to the segments of a divided
	// test, so that their records never collide
	k := int64(w.seg.Global(uint64(w.probes.Add(1)-1))) + 1
	s.probe = k
	n := cfg.freshRecords
	var interval int64
	if cfg.freshRate > 0 {
		interval = int64(float64(time.Second) / cfg.freshRate)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		lastAck  atomic.Int64
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	start := metrics.Now()
	for range min(int64(cfg.freshWriters), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j := next.Add(1) - 1
				if j >= n || ctx.Err() != nil {
					return
				}
				if d := start + j*interval - metrics.Now(); d > 0 {
					if err := sleep(ctx, time.Duration(d)); err != nil {
						return
					}
				}
				rec := freshRecord(k, j, n)
				if err := w.st.insert(ctx, &rec); err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("probe %d, record %d: %w", k, j, err) })
					cancel()
					return
				}
				for t := metrics.Now(); ; {
					old := lastAck.Load()
					if t <= old || lastAck.CompareAndSwap(old, t) {
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		w.fresh.fail()
		return firstErr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.lastAck = lastAck.Load()
	s.writeRate = float64(n) / (float64(s.lastAck-start) / 1e9)
	s.pollPending = true
	s.v.wrote()
	return nil
}

// freshnessPoll counts the probe's records as another user sees them, at
// once and then every logs.freshness_poll after the last acknowledged
// write, until all are visible.
func (s *Session) freshnessPoll(ctx context.Context) error {
	s.pollPending = false
	cfg := s.w.cfg
	ts := FreshBase + s.probe
	for polls := 1; ; polls++ {
		if d := s.lastAck + int64(polls-1)*int64(cfg.freshPoll) - metrics.Now(); d > 0 {
			if err := sleep(ctx, time.Duration(d)); err != nil {
				return err
			}
		}
		n, err := s.v.countVisible(ctx, ts)
		if err != nil {
			s.w.fresh.fail()
			return fmt.Errorf("probe %d, poll %d: %w", s.probe, polls, err)
		}
		if n == cfg.freshRecords {
			s.w.fresh.add(time.Duration(metrics.Now()-s.lastAck), polls, s.writeRate)
			return nil
		}
		if n > cfg.freshRecords {
			return fmt.Errorf("%w: probe %d wrote %d records with timestamp %d, %d are visible", engine.ErrIntegrity, s.probe, cfg.freshRecords, ts, n)
		}
		if polls >= cfg.freshMax {
			s.w.fresh.fail()
			return metrics.WithClass(metrics.Timeout, fmt.Errorf("probe %d: %d of %d records visible after %d polls over %s", s.probe, n, cfg.freshRecords, polls, time.Duration(metrics.Now()-s.lastAck).Round(time.Millisecond)))
		}
	}
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// freshStats collects the freshness probes' outcomes for the report.
type freshStats struct {
	mu     sync.Mutex
	delays []time.Duration
	polls  []int
	rates  []float64 // records per second each probe's writes achieved
	failed int
}

func (f *freshStats) add(d time.Duration, polls int, rate float64) {
	f.mu.Lock()
	f.delays = append(f.delays, d)
	f.polls = append(f.polls, polls)
	f.rates = append(f.rates, rate)
	f.mu.Unlock()
}

func (f *freshStats) fail() {
	f.mu.Lock()
	f.failed++
	f.mu.Unlock()
}

// report describes the probes: the distribution over probes of the delay
// from the last acknowledged write until all records were visible, and of
// the polls it took. A percentile the probe count cannot support (p90
// needs 10 probes, p99 100) is nil.
func (f *freshStats) report(cfg *config) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.delays) == 0 && f.failed == 0 {
		return nil
	}
	ms := make([]float64, len(f.delays))
	for i, d := range f.delays {
		ms[i] = float64(d) / 1e6
	}
	probes := make([]map[string]any, len(ms))
	for i := range ms {
		probes[i] = map[string]any{"delay_ms": ms[i], "polls": f.polls[i], "write_rate_per_s": f.rates[i]}
	}
	polls := make([]float64, len(f.polls))
	for i, p := range f.polls {
		polls[i] = float64(p)
	}
	return map[string]any{
		"probes":              len(ms),
		"failed_probes":       f.failed,
		"records_per_probe":   cfg.freshRecords,
		"write_rate_per_s":    cfg.freshRate,
		"achieved_rate_per_s": distribution(f.rates),
		"poll_interval_ms":    float64(cfg.freshPoll) / 1e6,
		"delay_ms":            distribution(ms),
		"polls":               distribution(polls),
		"each":                probes,
		"note":                "delay: from a probe's last acknowledged write until a query (at once, then every poll interval) counted all its records; every probe of the run, warm-up included",
	}
}

// distribution summarises values: count, min, mean, p50, p90, p99, max,
// with percentiles the count cannot support as nil.
func distribution(v []float64) map[string]any {
	out := map[string]any{"count": len(v), "min": nil, "mean": nil, "p50": nil, "p90": nil, "p99": nil, "max": nil}
	if len(v) == 0 {
		return out
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	rank := func(p float64) float64 { // nearest rank
		i := int(float64(len(s))*p+0.999999) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	out["min"], out["max"], out["mean"], out["p50"] = s[0], s[len(s)-1], sum/float64(len(s)), rank(0.5)
	if len(s) >= 10 {
		out["p90"] = rank(0.9)
	}
	if len(s) >= 100 {
		out["p99"] = rank(0.99)
	}
	return out
}

// upper is the most a correct count can be: the ground truth over every
// record a write has started for. In a divided test the other segments'
// writes are unknown here, so there is no upper bound.
func (w *Workload) upper(truth func(n int64) int64) int64 {
	if w.seg.Split() {
		return math.MaxInt64
	}
	return truth(w.ids.issued.Load())
}
