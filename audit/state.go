package audit

import (
	"fmt"
	"math"
	"slices"
)

// History is what the audit knows of a run's writes, kept as the writes
// complete (while the run streams its history, or while a history file is
// read): the item ids by outcome, as compact sets, and for every register
// only the writes that may still be its final value. Its memory grows
// with the keys written and the writes in flight, not with the writes.
type History struct {
	// Torn is set when the file ended in a partial record or line (the
	// process died while writing it); it is ignored.
	Torn bool

	ack, unknown, failed idSet
	counts               Counts
	spans                int64 // item writes (a bulk write is one)

	regs       map[int64]regState
	extra      [][]cand // further candidates of the registers that have them
	freeExtra  []int32  // indexes of extra free for reuse
	regCounts  regCounts
	maxVersion int64 // the greatest register version the history holds
	minVersion int64 // the least (0: none)
	lastTime   int64 // the latest time a register record holds, µs since the history began
	// logged holds every register version of a history read from a file
	// (nil while a run streams its own): a killed run's check tells a
	// write it never recorded from one of another register (unlogged).
	logged *idSet
	keyOf  func(int64) int64
}

// SetKeyOf sets how registers map to the keys they are parts of (ycsb: a
// record's fields), so that the audit counts keys as keys; nil: each
// register is a key.
func (h *History) SetKeyOf(keyOf func(register int64) int64) { h.keyOf = keyOf }

// regCounts counts register writes by outcome.
type regCounts struct {
	writes, acked, failed, unknown int64
}

// regState is what can still decide a register's verdict: the greatest
// invocation time of an acknowledged write, and the writes whose value
// may be final (acknowledged ones that no later acknowledged write
// follows in real time, and those whose outcome is unknown). The first
// such write is held in place, any more in History.extra: the map holds
// no pointers for the garbage collector to scan.
type regState struct {
	lastInv int64 // greatest invocation of an acknowledged write; -1: none
	c0      cand  // ver 0: none
	more    int32 // 1 + index in History.extra of the further candidates; 0: none
	fresh   bool  // the key did not exist before the run
}

// cand is a write whose value may be final: ver is negative for a delete,
// end math.MaxInt64 while its outcome is unknown.
type cand struct {
	ver, end int64
}

func newHistory() *History {
	return &History{regs: map[int64]regState{}, counts: Counts{UnknownByClass: map[string]int64{}}}
}

// addSpan records a completed (or, at the end, still invoked) item write.
func (h *History) addSpan(s Span) {
	n := int64(s.N)
	h.spans++
	c := &h.counts
	c.Attempted += n
	switch s.Outcome {
	case OK:
		c.OK += n
		h.ack.add(s.First, n)
	case Failed:
		c.Failed += n
		h.failed.add(s.First, n)
	case Unknown:
		c.Unknown += n
		c.UnknownByClass[s.Class.String()] += n
		h.unknown.add(s.First, n)
	default:
		c.InFlight += n
		c.UnknownByClass["in_flight"] += n
		h.unknown.add(s.First, n)
	}
}

// addRegister records a completed (or, at the end, still invoked) register
// write. The order in which writes are added does not matter: a write is
// dropped only once an acknowledged write that began after it ended is
// known, and the writes kept at the end are those the rule allows
// (registerState).
func (h *History) addRegister(r RegWrite) {
	h.maxVersion = max(h.maxVersion, r.Version)
	if h.minVersion == 0 || r.Version < h.minVersion {
		h.minVersion = r.Version
	}
	h.lastTime = max(h.lastTime, r.Inv)
	if r.End != math.MaxInt64 {
		h.lastTime = max(h.lastTime, r.End)
	}
	if h.logged != nil {
		h.logged.add(r.Version, 1)
	}
	h.regCounts.writes++
	switch r.Outcome {
	case OK:
		h.regCounts.acked++
	case Failed:
		h.regCounts.failed++
	default:
		h.regCounts.unknown++
	}
	k, ok := h.regs[r.Key]
	if !ok {
		k.lastInv = -1
	}
	k.fresh = k.fresh || r.Insert
	ver := r.Version
	if r.Delete {
		ver = -ver
	}
	switch r.Outcome {
	case OK:
		if r.Inv > k.lastInv {
			k.lastInv = r.Inv
			h.prune(&k)
		}
		if r.End >= k.lastInv {
			h.addCand(&k, cand{ver, r.End})
		}
	case Unknown, Invoked:
		h.addCand(&k, cand{ver, math.MaxInt64})
	}
	h.regs[r.Key] = k
}

// cands returns k's candidates (the first, then the further ones).
func (h *History) cands(k *regState, buf []cand) []cand {
	buf = buf[:0]
	if k.c0.ver != 0 {
		buf = append(buf, k.c0)
	}
	if k.more > 0 {
		buf = append(buf, h.extra[k.more-1]...)
	}
	return buf
}

func (h *History) addCand(k *regState, c cand) {
	switch {
	case k.c0.ver == 0:
		k.c0 = c
	case k.more > 0:
		h.extra[k.more-1] = append(h.extra[k.more-1], c)
	default:
		if n := len(h.freeExtra); n > 0 {
			k.more = h.freeExtra[n-1] + 1
			h.freeExtra = h.freeExtra[:n-1]
			h.extra[k.more-1] = append(h.extra[k.more-1][:0], c)
		} else {
			h.extra = append(h.extra, []cand{c})
			k.more = int32(len(h.extra))
		}
	}
}

// prune drops the acknowledged candidates that ended before k.lastInv.
func (h *History) prune(k *regState) {
	keep := func(c cand) bool { return c.end >= k.lastInv }
	if k.more == 0 {
		if k.c0.ver != 0 && !keep(k.c0) {
			k.c0 = cand{}
		}
		return
	}
	more := h.extra[k.more-1]
	all := append(more, cand{}) // room for c0 in front
	copy(all[1:], more)
	all[0] = k.c0
	kept := all[:0]
	for _, c := range all {
		if c.ver != 0 && keep(c) {
			kept = append(kept, c)
		}
	}
	k.c0 = cand{}
	if len(kept) > 0 {
		k.c0 = kept[0]
		kept = kept[1:]
	}
	if len(kept) == 0 {
		h.extra[k.more-1] = all[:0]
		h.freeExtra = append(h.freeExtra, k.more-1)
		k.more = 0
		return
	}
	h.extra[k.more-1] = kept
}

// Counts are item counts by outcome.
type Counts struct {
	Attempted int64 // every invoked item
	OK        int64
	Failed    int64
	Unknown   int64 // with a recorded unknown outcome
	InFlight  int64 // invoked, no outcome recorded: unknown too
	// UnknownByClass counts unknown items (InFlight under "in_flight") by
	// error class.
	UnknownByClass map[string]int64
}

// Counts sums the history's items by outcome.
func (h *History) Counts() Counts {
	c := h.counts
	c.UnknownByClass = map[string]int64{}
	for k, v := range h.counts.UnknownByClass {
		c.UnknownByClass[k] = v
	}
	return c
}

// ItemWrites is the number of item writes (a bulk write is one).
func (h *History) ItemWrites() int64 { return h.spans }

// RegisterWrites is the number of register writes (updates, inserts and
// deletes of registers).
func (h *History) RegisterWrites() int64 { return h.regCounts.writes }

// MaxVersion is the greatest register version the history holds: a
// register holding a greater one was written after the history (by a
// later run) or by a write the history did not record.
func (h *History) MaxVersion() int64 { return h.maxVersion }

// Bytes is about the memory the history holds.
func (h *History) Bytes() int64 {
	b := h.ack.bytes() + h.unknown.bytes() + h.failed.bytes()
	b += int64(len(h.regs)) * 48 // a map slot: key, value, control byte, load factor
	for _, c := range h.extra {
		b += 24 + int64(cap(c))*16
	}
	if h.logged != nil {
		b += h.logged.bytes()
	}
	return b
}

// regKey is one register's verdict inputs: the versions its final value
// may hold.
type regKey struct {
	key     int64
	initial bool    // no write was acknowledged: the initial value may remain
	fresh   bool    // the key did not exist before the run: its initial value is absence
	puts    []int64 // versions of writes whose value may be the final one
	deletes []int64 // versions of deletes that may be the final operation
	acked   int64   // the greatest version of an acknowledged write among them (0: none)
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

// registerState is the verdict inputs of one register from its state:
// a write's value may be final unless another acknowledged write of the
// key began after it completed (that write follows it in real time).
// Acknowledged writes that overlap in time are ambiguous among
// themselves, so each may be final; a write whose outcome is unknown may
// have taken effect at any time after its invocation, so it may always be
// final; a failed write (known not applied) never is; and the initial
// value may remain only when no write was acknowledged. ok is false for a
// key whose every write failed: the run did not change it.
func (h *History) registerState(key int64, k *regState) (regKey, bool) {
	r := regKey{key: key, initial: k.lastInv < 0, fresh: k.fresh}
	if k.c0.ver == 0 && k.more == 0 && k.lastInv < 0 {
		return r, false
	}
	var buf [4]cand
	for _, c := range h.cands(k, buf[:0]) {
		if c.end != math.MaxInt64 {
			r.acked = max(r.acked, c.ver, -c.ver)
		}
		if c.ver < 0 {
			r.deletes = append(r.deletes, -c.ver)
		} else {
			r.puts = append(r.puts, c.ver)
		}
	}
	return r, true
}

// registerList is every register the run changed, by key.
func (h *History) registerList() []regKey {
	out := make([]regKey, 0, len(h.regs))
	for key, k := range h.regs {
		if r, ok := h.registerState(key, &k); ok {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b regKey) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		}
		return 0
	})
	return out
}

// changedRegisters counts the registers the run changed (a write that did
// not fail) and, with a keyOf, the keys they are parts of (else 0).
func (h *History) changedRegisters() (regs, keys int64) {
	var ks []int64
	for reg, k := range h.regs {
		if k.c0.ver != 0 || k.more > 0 || k.lastInv >= 0 {
			regs++
			if h.keyOf != nil {
				ks = append(ks, h.keyOf(reg))
			}
		}
	}
	if h.keyOf != nil {
		slices.Sort(ks)
		keys = int64(len(slices.Compact(ks)))
	}
	return regs, keys
}
