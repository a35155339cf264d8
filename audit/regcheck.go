package audit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/segment"
)

// Versions a register read-back reports besides the versions writes stored.
const (
	// Absent: the store does not hold the register (deleted, or never there).
	Absent int64 = -1
	// Initial: the register holds the value written before the run (loaded,
	// or inserted by an audited item write), which carries no version.
	Initial int64 = 0
)

// RegisterReader reads back the version each register holds: Absent,
// Initial, or the version a logged write stored (scenario.RegisterReader;
// the audit package imports no scenario).
type RegisterReader interface {
	ReadVersions(ctx context.Context, keys []int64, versions []int64) error
}

// CheckRegisters reads back every register the history's updates and
// deletes wrote and checks it holds a value it may hold (see
// registerKeys). A register that does not is re-read up to three times
// (a replica or index may still be catching up) before it counts as lost
// (an older value, or absent where a write is due) or resurrected
// (present where its last operation was a delete).
func CheckRegisters(ctx context.Context, h *History, rr RegisterReader, cfg CheckConfig) (*results.RegisterAudit, error) {
	cfg.defaults()
	start := time.Now()
	keys := h.registerList()
	a := summarizeRegisters(h, int64(len(keys)))
	if h.keyOf != nil {
		a.Registers, a.Keys = a.Keys, distinctKeys(keys, h.keyOf)
	}
	for i := range keys {
		if n := len(keys[i].puts) + len(keys[i].deletes); n > 1 || (n == 1 && keys[i].initial) {
			a.Ambiguous++
		}
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	bad, read, err := readRegisters(ctx, keys, rr, cfg)
	if cfg.Segment.Split() {
		bad = dropForeign(bad, keys, cfg.Segment, a)
	}
	bad = dropOverwritten(bad, h.maxVersion, cfg.LaterRun, a)
	for try := 1; err == nil && len(bad) > 0 && try <= 3; try++ {
		t := time.NewTimer(time.Duration(try*try) * cfg.Settle)
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-t.C:
		}
		if err == nil {
			again := make([]regKey, len(bad))
			for i, b := range bad {
				again[i] = keys[b.i]
			}
			var still []mismatch
			still, _, err = readRegisters(ctx, again, rr, cfg)
			for j := range still {
				still[j].i = bad[still[j].i].i
			}
			bad = dropOverwritten(still, h.maxVersion, cfg.LaterRun, a)
		}
	}
	a.ReadBack = read
	a.Seconds = time.Since(start).Seconds()
	if err != nil {
		a.Error = err.Error()
		return a, fmt.Errorf("audit register read-back: %w", err)
	}
	slices.SortFunc(bad, func(x, y mismatch) int { return cmp.Compare(keys[x.i].key, keys[y.i].key) })
	for _, b := range bad {
		k := &keys[b.i]
		kind := "lost"
		if b.seen != Absent && len(k.puts) == 0 && !k.initial {
			kind = "resurrected"
			a.Resurrected++
		} else {
			a.Lost++
		}
		if len(a.Examples) < cfg.MaxIDs {
			a.Examples = append(a.Examples, results.RegisterLoss{Key: k.key, Kind: kind, Seen: b.seen, Want: k.want()})
		}
	}
	a.Checked = true
	return a, nil
}

// summarizeRegisters counts the register writes by outcome and the keys
// they wrote (keys whose every write failed are not counted: nothing of
// the run changed them).
func summarizeRegisters(h *History, keys int64) *results.RegisterAudit {
	c := h.regCounts
	return &results.RegisterAudit{Keys: keys, Writes: c.writes, Acknowledged: c.acked, Failed: c.failed, Unknown: c.unknown}
}

// distinctKeys counts the keys the registers are parts of.
func distinctKeys(regs []regKey, keyOf func(int64) int64) int64 {
	ks := make([]int64, len(regs))
	for i := range regs {
		ks[i] = keyOf(regs[i].key)
	}
	slices.Sort(ks)
	return int64(len(slices.Compact(ks)))
}

// dropOverwritten takes out of bad the registers the store changed after
// the run: holding a version greater than any the history holds (a later
// run's, versions grow with the time a history began), or, when a later
// run was recorded on the same store (laterRun), holding the value from
// before the run or nothing (that run may have loaded or deleted it).
// They are counted in a.Overwritten and not judged.
func dropOverwritten(bad []mismatch, maxVersion int64, laterRun bool, a *results.RegisterAudit) []mismatch {
	out := bad[:0]
	for _, b := range bad {
		if b.seen > maxVersion || (laterRun && (b.seen == Absent || b.seen == Initial)) {
			a.Overwritten++
			continue
		}
		out = append(out, b)
	}
	return out
}

// mismatch is a register (index into the keys read) that held a value it
// may not hold.
type mismatch struct {
	i    int
	seen int64
}

// readRegisters reads keys back in batches on cfg.Workers goroutines and
// returns the mismatches and how many registers were read.
func readRegisters(ctx context.Context, keys []regKey, rr RegisterReader, cfg CheckConfig) ([]mismatch, int64, error) {
	var (
		mu       sync.Mutex
		bad      []mismatch
		firstErr error
		read     atomic.Int64
		next     atomic.Int64
	)
	work := func() {
		ids := make([]int64, 0, cfg.Batch)
		vers := make([]int64, cfg.Batch)
		for ctx.Err() == nil {
			lo := int(next.Add(int64(cfg.Batch))) - cfg.Batch
			if lo >= len(keys) {
				return
			}
			hi := min(lo+cfg.Batch, len(keys))
			ids = ids[:0]
			for i := lo; i < hi; i++ {
				ids = append(ids, keys[i].key)
			}
			v := vers[:len(ids)]
			if err := readVersions(ctx, rr, ids, v, cfg.Retries); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				return
			}
			for j, seen := range v {
				if !keys[lo+j].allows(seen) {
					mu.Lock()
					bad = append(bad, mismatch{lo + j, seen})
					mu.Unlock()
				}
			}
			read.Add(int64(len(ids)))
		}
	}
	var wg sync.WaitGroup
	for range cfg.Workers {
		wg.Add(1)
		go func() { defer wg.Done(); work() }()
	}
	wg.Wait()
	err := firstErr
	if err == nil && read.Load() < int64(len(keys)) {
		err = ctx.Err()
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("read-back timed out after %s with %d of %d registers read", cfg.Timeout, read.Load(), len(keys))
		}
	}
	return bad, read.Load(), err
}

// readVersions calls rr, retrying failures after a growing pause.
func readVersions(ctx context.Context, rr RegisterReader, keys, versions []int64, retries int) error {
	return withRetries(ctx, retries, fmt.Sprintf("%d registers from %d", len(keys), keys[0]), func() error {
		return rr.ReadVersions(ctx, keys, versions)
	})
}

// dropForeign takes out of bad the registers another segment of a divided
// test may have written last: holding a version of another segment, or
// absent when this segment deleted nothing there (another one may have).
// They are counted in a.Foreign: one segment cannot order its writes
// against another's, so it does not judge them.
func dropForeign(bad []mismatch, keys []regKey, seg segment.Segment, a *results.RegisterAudit) []mismatch {
	n := int64(seg.N())
	out := bad[:0]
	for _, b := range bad {
		foreign := b.seen > 0 && (b.seen-1)%n != int64(seg.Index)
		if b.seen == Absent && len(keys[b.i].deletes) == 0 {
			foreign = true
		}
		if foreign {
			a.Foreign++
			continue
		}
		out = append(out, b)
	}
	return out
}
