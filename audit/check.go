package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/segment"
)

// CheckConfig bounds the read-back. Zero fields take the defaults.
type CheckConfig struct {
	Batch   int           // item ids per ReadBack call; default 500
	Workers int           // ReadBack calls in parallel; default 4
	Timeout time.Duration // the whole read-back; default 10 minutes
	Retries int           // retries of a failed ReadBack call; default 3
	MaxIDs  int           // lost ids listed; default 20
	// Settle is the first pause before a register that held an unexpected
	// value is read again (then 4x and 9x it); default 500 ms.
	Settle   time.Duration
	Progress io.Writer // a progress line about every second; nil: none
	// Segment is the run's share of a divided test: a register holding a
	// version of another segment (or absent, when this one deleted
	// nothing) was overwritten by that segment and is counted foreign,
	// not lost (CheckRegisters).
	Segment segment.Segment
	// LaterRun is set when a later run was recorded on the same store
	// (`scalelab audit DIR` of an older run): a register holding its value
	// from before the run, or absent, and an item absent, may have been
	// reloaded or deleted by that run; they are counted overwritten
	// since the run and not judged.
	LaterRun bool
	// Incomplete is set when the run's process died (kill -9): its
	// history lacks the records its sessions had not yet flushed. A
	// register holding one of those writes (a version of the run that the
	// history does not hold, newer than every acknowledged write of the
	// register) is counted in Unlogged and not judged (CheckRegisters).
	Incomplete bool
}

func (c *CheckConfig) defaults() {
	orDefault(&c.Batch, 500)
	orDefault(&c.Workers, 4)
	orDefault(&c.Timeout, 10*time.Minute)
	orDefault(&c.Retries, 3)
	orDefault(&c.MaxIDs, 20)
	orDefault(&c.Settle, 500*time.Millisecond)
}

// orDefault sets *v to d when it is zero or negative.
func orDefault[T int | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// Summarize returns the audit section of a history without a read-back
// (Checked false): what a report of a run whose process died can show.
func Summarize(h *History) *results.Audit {
	c := h.Counts()
	a := &results.Audit{Attempted: c.Attempted, Acknowledged: c.OK, Failed: c.Failed,
		Unknown: c.Unknown + c.InFlight, TornLine: h.Torn}
	if len(c.UnknownByClass) > 0 {
		a.UnknownByClass = c.UnknownByClass
	}
	if h.regCounts.writes > 0 {
		regs, keys := h.changedRegisters()
		a.Registers = summarizeRegisters(h, regs)
		if h.keyOf != nil {
			a.Registers.Registers, a.Registers.Keys = regs, keys
		}
	}
	return a
}

// ReadBacker reports which item ids a store holds (scenario.ReadBacker;
// the audit package imports no scenario, so that reports can use it).
type ReadBacker interface {
	ReadBack(ctx context.Context, ids []int64, present []bool) error
}

// batch is a set of ids of one outcome to read back.
type batch struct {
	out Outcome
	ids []int64
}

// Check reads back every written item of h through rb (acknowledged items
// first, then unknown, then failed ones) and fills in the audit section.
// Read-back errors are retried; if the read-back cannot finish (errors,
// timeout, cancelled ctx) the section says so in Error, with Checked false
// and the figures of the items read so far, and Check returns the error.
func Check(ctx context.Context, h *History, rb ReadBacker, cfg CheckConfig) (*results.Audit, error) {
	cfg.defaults()
	a := Summarize(h)
	start := time.Now()
	total := a.Attempted
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	batches := make(chan batch, cfg.Workers)
	go plan(ctx, h, cfg.Batch, batches)

	c := &itemCheck{ctx: ctx, cancel: cancel, rb: rb, cfg: &cfg}
	done := c.start(batches)
	if cfg.Progress != nil && total > 0 {
		c.progress(done, total)
	}
	<-done

	c.fill(a)
	a.Seconds = time.Since(start).Seconds()
	if err := c.err(a.ReadBack, total); err != nil {
		a.Error = err.Error()
		return a, fmt.Errorf("audit read-back: %w", err)
	}
	a.Checked = true
	return a, nil
}

// itemCheck is the state Check's read-back workers share.
type itemCheck struct {
	ctx    context.Context
	cancel context.CancelFunc
	rb     ReadBacker
	cfg    *CheckConfig

	mu       sync.Mutex
	lost     []int64
	firstErr error
	read     atomic.Int64
	// absent acknowledged, present unknown, absent unknown, present
	// failed, absent acknowledged after a later run
	tally [5]atomic.Int64
}

// start runs cfg.Workers workers on batches and returns a channel closed
// when they have all returned.
func (c *itemCheck) start(batches <-chan batch) <-chan struct{} {
	var wg sync.WaitGroup
	for range c.cfg.Workers {
		wg.Add(1)
		go func() { defer wg.Done(); c.work(batches) }()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	return done
}

// work reads back the batches until the channel closes; after a failed
// read-back (or the end of ctx) it only drains them.
func (c *itemCheck) work(batches <-chan batch) {
	present := make([]bool, c.cfg.Batch)
	for b := range batches {
		if c.ctx.Err() != nil {
			continue // drain: plan stops at the cancellation
		}
		p := present[:len(b.ids)]
		if err := readBack(c.ctx, c.rb, b.ids, p, c.cfg.Retries); err != nil {
			c.mu.Lock()
			if c.firstErr == nil {
				c.firstErr = err
			}
			c.mu.Unlock()
			c.cancel()
			continue
		}
		c.count(b, p)
		c.read.Add(int64(len(b.ids)))
	}
}

// count tallies the items of b by outcome and presence, keeping the ids
// of lost ones.
func (c *itemCheck) count(b batch, present []bool) {
	for j, ok := range present {
		switch {
		case b.out == OK && !ok && c.cfg.LaterRun:
			c.tally[4].Add(1)
		case b.out == OK && !ok:
			c.tally[0].Add(1)
			c.keepLost(b.ids[j])
		case (b.out == Unknown || b.out == Invoked) && ok:
			c.tally[1].Add(1)
		case (b.out == Unknown || b.out == Invoked) && !ok:
			c.tally[2].Add(1)
		case b.out == Failed && ok:
			c.tally[3].Add(1)
		}
	}
}

// keepLost keeps id if it is among the cfg.MaxIDs lowest lost ids seen so
// far, holding at most twice that many.
func (c *itemCheck) keepLost(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lost = append(c.lost, id)
	if len(c.lost) > 2*c.cfg.MaxIDs {
		slices.Sort(c.lost)
		c.lost = c.lost[:c.cfg.MaxIDs]
	}
}

// progress writes a progress line to cfg.Progress every second until
// done closes.
func (c *itemCheck) progress(done <-chan struct{}, total int64) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			fmt.Fprintf(c.cfg.Progress, "audit: read back %d of %d written items (%.0f%%)\n", c.read.Load(), total, 100*float64(c.read.Load())/float64(total))
		}
	}
}

// fill sets the read-back figures of a and its first lost ids, ascending.
func (c *itemCheck) fill(a *results.Audit) {
	a.ReadBack = c.read.Load()
	a.Lost, a.UnknownPresent, a.UnknownAbsent, a.FailedPresent, a.Overwritten = c.tally[0].Load(), c.tally[1].Load(), c.tally[2].Load(), c.tally[3].Load(), c.tally[4].Load()
	slices.Sort(c.lost)
	if len(c.lost) > c.cfg.MaxIDs {
		c.lost = c.lost[:c.cfg.MaxIDs]
	}
	a.LostIDs = c.lost
}

// err returns why the read-back stopped with read of total items read:
// the first read-back error, the timeout or the end of ctx; nil when it
// finished.
func (c *itemCheck) err(read, total int64) error {
	err := c.firstErr
	if err == nil && read < total {
		err = c.ctx.Err()
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("read-back timed out after %s with %d of %d items read", c.cfg.Timeout, read, total)
		}
		if err == nil {
			err = fmt.Errorf("read-back stopped with %d of %d items read", read, total)
		}
	}
	return err
}

// readBack calls rb, retrying failures after a growing pause.
func readBack(ctx context.Context, rb ReadBacker, ids []int64, present []bool, retries int) error {
	return withRetries(ctx, retries, fmt.Sprintf("%d items from %d", len(ids), ids[0]), func() error {
		clear(present)
		return rb.ReadBack(ctx, ids, present)
	})
}

// withRetries calls read until it succeeds, at most retries times more
// after a pause that grows with each try (try² × 250 ms). Its error names
// what was read and the last failure, also when ctx ends a pause.
func withRetries(ctx context.Context, retries int, what string, read func() error) error {
	var err error
	for try := 0; try <= retries; try++ {
		if try > 0 {
			t := time.NewTimer(time.Duration(try*try) * 250 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("read back %s: %w (after %v)", what, ctx.Err(), err)
			case <-t.C:
			}
		}
		if err = read(); err == nil {
			return nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("read back %s: %w", what, err)
}

// plan sends the written items in batches of at most size ids of one
// outcome, acknowledged first, then unknown (with in-flight), then failed,
// and closes out; it stops early when ctx ends. Batches are made as the
// workers take them from the history's compact sets of ids.
func plan(ctx context.Context, h *History, size int, out chan<- batch) {
	defer close(out)
	for _, set := range []struct {
		out Outcome
		ids *idSet
	}{{OK, &h.ack}, {Unknown, &h.unknown}, {Failed, &h.failed}} {
		cur := batch{out: set.out, ids: make([]int64, 0, size)}
		ok := true
		send := func() bool {
			select {
			case out <- cur:
				cur = batch{out: set.out, ids: make([]int64, 0, size)}
				return true
			case <-ctx.Done():
				return false
			}
		}
		set.ids.each(func(id int64) bool {
			cur.ids = append(cur.ids, id)
			if len(cur.ids) == size {
				ok = send()
			}
			return ok
		})
		if !ok || len(cur.ids) > 0 && !send() {
			return
		}
	}
}
