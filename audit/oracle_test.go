package audit

import (
	"cmp"
	"os"
	"slices"
	"testing"
)

// registerKeys is the full-history rule the incremental History replaced,
// kept as the reference its verdicts are compared with: it sorts every
// register write of the run by key and derives, for each key, the values
// its final state may hold.
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

// histOf is the History of register writes, added in the order given.
func histOf(regs ...RegWrite) *History {
	h := newHistory()
	for _, r := range regs {
		h.addRegister(r)
	}
	return h
}

// history is the History of item writes.
func history(spans ...Span) *History {
	h := newHistory()
	for _, s := range spans {
		h.addSpan(s)
	}
	return h
}

// walkFile collects a history file's register writes (test helper).
func walkFile(t *testing.T, path string) ([]Span, []RegWrite) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var spans []Span
	var regs []RegWrite
	if err := Walk(f, func(s Span) { spans = append(spans, s) }, func(r RegWrite) { regs = append(regs, r) }, nil); err != nil {
		t.Fatal(err)
	}
	return spans, regs
}
