package audit

import (
	"math/bits"
	"slices"
)

// idSet is a compact set of item ids: the ids are grouped by their high
// 48 bits into chunks of 65,536, each a sorted array of the low 16 bits
// while it holds at most 4,096 ids (2 bytes an id), else a bitmap (8 KiB:
// at most 2 bytes an id, 1 bit when dense). Item ids come mostly in runs
// (a counter) or spread evenly (mhealth's patient << 32 | start): either
// costs a few bytes an id.
type idSet struct {
	chunks map[int64]*idChunk
	n      int64
}

type idChunk struct {
	small []uint16 // sorted, while bits is nil
	bits  []uint64 // 1,024 words once the chunk holds more than maxSmall ids
	n     int32
}

const maxSmall = 4096

// add adds ids first..first+n-1.
func (s *idSet) add(first int64, n int64) {
	if s.chunks == nil {
		s.chunks = map[int64]*idChunk{}
	}
	for n > 0 {
		hi := first >> 16
		lo := uint16(first)
		take := min(n, 1<<16-int64(lo))
		c := s.chunks[hi]
		if c == nil {
			c = &idChunk{}
			s.chunks[hi] = c
		}
		for k := range take {
			if c.add(lo + uint16(k)) {
				s.n++
			}
		}
		first += take
		n -= take
	}
}

// add adds low to the chunk and reports whether it was new.
func (c *idChunk) add(low uint16) bool {
	if c.bits == nil {
		m := len(c.small)
		if m > 0 && c.small[m-1] < low {
			c.small = append(c.small, low) // the common case: ascending
		} else {
			i, found := slices.BinarySearch(c.small, low)
			if found {
				return false
			}
			c.small = slices.Insert(c.small, i, low)
		}
		c.n++
		if len(c.small) > maxSmall {
			c.bits = make([]uint64, 1<<10)
			for _, v := range c.small {
				c.bits[v>>6] |= 1 << (v & 63)
			}
			c.small = nil
		}
		return true
	}
	w, b := low>>6, uint64(1)<<(low&63)
	if c.bits[w]&b != 0 {
		return false
	}
	c.bits[w] |= b
	c.n++
	return true
}

// has reports whether id is in the set.
func (s *idSet) has(id int64) bool {
	c := s.chunks[id>>16]
	if c == nil {
		return false
	}
	low := uint16(id)
	if c.bits == nil {
		_, found := slices.BinarySearch(c.small, low)
		return found
	}
	return c.bits[low>>6]&(1<<(low&63)) != 0
}

// len is the number of ids.
func (s *idSet) len() int64 { return s.n }

// each calls fn with every id in ascending order until fn returns false.
func (s *idSet) each(fn func(id int64) bool) {
	his := make([]int64, 0, len(s.chunks))
	for hi := range s.chunks {
		his = append(his, hi)
	}
	slices.Sort(his)
	for _, hi := range his {
		c := s.chunks[hi]
		base := hi << 16
		if c.bits == nil {
			for _, lo := range c.small {
				if !fn(base | int64(lo)) {
					return
				}
			}
			continue
		}
		for w, word := range c.bits {
			for word != 0 {
				b := bits.TrailingZeros64(word)
				word &= word - 1
				if !fn(base | int64(w<<6|b)) {
					return
				}
			}
		}
	}
}

// bytes is the memory the set holds, about.
func (s *idSet) bytes() int64 {
	var b int64
	for _, c := range s.chunks {
		b += 64 + int64(cap(c.small))*2 + int64(len(c.bits))*8
	}
	return b
}
