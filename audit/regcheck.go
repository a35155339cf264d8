package audit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/scalelab/scalelab/segment"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scalelab/scalelab/results"
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

// regKey is one register's verdict inputs: the versions its final value
// may hold.
type regKey struct {
	key     int64
	initial bool    // no write was acknowledged: the initial value may remain
	fresh   bool    // the key did not exist before the run: its initial value is absence
	puts    []int64 // versions of writes whose value may be the final one
	deletes []int64 // versions of deletes that may be the final operation
}

// allows reports whether the register may hold version v.
func (k *regKey) allows(v int64) bool {
	switch {
	case v == Absent:
		return len(k.deletes) > 0 || (k.initial && k.fresh)
	case v == Initial:
		return k.initial && !k.fresh
	}
	return slices.Contains(k.puts, v)
}

// want describes the versions k may hold, for a report.
func (k *regKey) want() []string {
	var w []string
	switch {
	case k.initial && k.fresh:
		w = append(w, "absent (never created)")
	case k.initial:
		w = append(w, "initial")
	}
	for _, v := range k.puts {
		w = append(w, fmt.Sprintf("v%d", v))
	}
	for _, v := range k.deletes {
		w = append(w, fmt.Sprintf("deleted by v%d", v))
	}
	return w
}

// registerKeys derives, for every register written, the values its final
// state may hold. The rule: a write's value may be final unless another
// acknowledged write of the key began after it completed (that write
// follows it in real time). Acknowledged writes that overlap in time are
// ambiguous among themselves, so each may be final; a write whose outcome
// is unknown may have taken effect at any time after its invocation, so it
// may always be final; a failed write (known not applied) never is; and
// the initial value may remain only when no write was acknowledged.
func registerKeys(regs []RegWrite) []regKey {
	idx := make([]int32, len(regs))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int { return cmp.Compare(regs[a].Key, regs[b].Key) })
	var out []regKey
	for lo := 0; lo < len(idx); {
		hi := lo
		key := regs[idx[lo]].Key
		lastAckedInv := int64(-1)
		for hi < len(idx) && regs[idx[hi]].Key == key {
			if r := &regs[idx[hi]]; r.Outcome == OK {
				lastAckedInv = max(lastAckedInv, r.Inv)
			}
			hi++
		}
		k := regKey{key: key, initial: lastAckedInv < 0}
		applied := false
		for _, i := range idx[lo:hi] {
			r := &regs[i]
			k.fresh = k.fresh || r.Insert
			may := false
			switch r.Outcome {
			case OK:
				may = r.End >= lastAckedInv
			case Unknown, Invoked:
				may = true
			}
			if !may {
				continue
			}
			applied = true
			if r.Delete {
				k.deletes = append(k.deletes, r.Version)
			} else {
				k.puts = append(k.puts, r.Version)
			}
		}
		if applied || lastAckedInv >= 0 {
			out = append(out, k) // a key whose every write failed is not checked
		}
		lo = hi
	}
	return out
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
	a := summarizeRegisters(h.Registers)
	keys := registerKeys(h.Registers)
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
			bad = still
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
func summarizeRegisters(regs []RegWrite) *results.RegisterAudit {
	a := &results.RegisterAudit{}
	written := map[int64]bool{}
	for _, r := range regs {
		a.Writes++
		switch r.Outcome {
		case OK:
			a.Acknowledged++
		case Failed:
			a.Failed++
		default:
			a.Unknown++
		}
		if r.Outcome != Failed {
			written[r.Key] = true
		}
	}
	a.Keys = int64(len(written))
	return a
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
	var err error
	for try := 0; try <= retries; try++ {
		if try > 0 {
			t := time.NewTimer(time.Duration(try*try) * 250 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("read back registers %d..: %w (after %v)", keys[0], ctx.Err(), err)
			case <-t.C:
			}
		}
		if err = rr.ReadVersions(ctx, keys, versions); err == nil {
			return nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("read back %d registers from %d: %w", len(keys), keys[0], err)
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
