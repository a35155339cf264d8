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
	bad = h.notJudged(bad, keys, cfg, a)
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
			bad = h.notJudged(still, keys, cfg, a)
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

// notJudged takes out of bad the registers the audit does not judge,
// counting them in a: another segment's (foreign), a killed run's writes
// its history never recorded (unlogged), and the store's changes since
// the run (overwritten).
func (h *History) notJudged(bad []mismatch, keys []regKey, cfg CheckConfig, a *results.RegisterAudit) []mismatch {
	if cfg.Segment.Split() {
		bad = dropForeign(bad, keys, cfg.Segment, a)
	}
	if cfg.Incomplete {
		bad = h.dropUnlogged(bad, keys, a)
	}
	return dropOverwritten(bad, h.maxVersion, cfg.LaterRun, a)
}

// dropUnlogged takes out of the mismatches of a killed run's history the
// registers holding a write of the run that the history never recorded:
// its sessions hand out versions from one counter and buffer their
// records by shard, so when the process dies the file lacks each shard's
// last records, whose versions may lie below the greatest it holds (a
// shard written later) as well as above it. Such a version is one the
// file holds for no register, at least the run's first and below
// versionLimit (a later run's are above), and newer than every
// acknowledged write of the register the history holds (an older one is
// still judged lost, strictly: an unrecorded write sent before that
// acknowledged one but still in flight when it was acknowledged could have
// landed last, so a loss within the killed run's last moments may be a
// false one). Without the
// set of logged versions (a history not read from a file) only versions
// above the greatest logged one qualify. They are counted in a.Unlogged
// and not judged.
func (h *History) dropUnlogged(bad []mismatch, keys []regKey, a *results.RegisterAudit) []mismatch {
	limit := h.versionLimit()
	out := bad[:0]
	for _, b := range bad {
		v := b.seen
		unlogged := v > keys[b.i].acked && v >= h.minVersion && v < limit &&
			(v > h.maxVersion || (h.logged != nil && !h.logged.has(v)))
		if unlogged {
			a.Unlogged++
			continue
		}
		out = append(out, b)
	}
	return out
}

// versionLimit is a bound on the register versions of the run: the
// version base of the time of the history's last record. A later run,
// begun after this one's last record, hands out versions from it up; the
// run's own, those it never recorded (its last 100 ms or so) included,
// are below it at any rate short of 4 M writes a millisecond
// (versionBits).
func (h *History) versionLimit() int64 {
	return (h.minVersion>>versionBits + h.lastTime/1000) << versionBits
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
