// Package segment divides one test into N disjoint shares (execution
// segments) that N scalelab processes, on one machine or many, run with
// no coordinator: each derives its share from its index and the count
// alone, and `scalelab merge` adds the shares' results back into one.
//
// The division: closed users and rate workers are dealt out round robin
// (user u runs in segment u mod N, so the segments' sizes differ by at
// most one), rates and phase arrival rates are divided by N (N independent
// Poisson streams of rate R/N sum to one of rate R), the --ops budget is
// split like the users, and session ids are strided (the k-th session of
// segment I is the whole test's session k*N+I), so the union of the
// segments runs the same sessions as the whole test. Keys a scenario
// creates during the run come from disjoint ranges (Key).
package segment

import (
	"fmt"
	"strconv"
	"strings"
)

// Segment is the share of a test one process runs: Index in [0, Count).
// The zero value and Count 1 mean the whole test.
type Segment struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// Whole is the segment of a test run by one process.
var Whole = Segment{Index: 0, Count: 1}

// MaxCount bounds the number of segments.
const MaxCount = 4096

// Parse reads "I/N": the I-th (0-based) of N segments.
func Parse(s string) (Segment, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Segment{}, fmt.Errorf("--segment %q: want I/N, the I-th (0-based) of N segments, e.g. 0/4", s)
	}
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	if err1 != nil || err2 != nil {
		return Segment{}, fmt.Errorf("--segment %q: I and N must be whole numbers, e.g. 0/4", s)
	}
	if n < 1 || n > MaxCount {
		return Segment{}, fmt.Errorf("--segment %q: N must be in [1, %d]", s, MaxCount)
	}
	if i < 0 || i >= n {
		return Segment{}, fmt.Errorf("--segment %q: I must be in [0, %d] (0-based)", s, n-1)
	}
	return Segment{Index: i, Count: n}, nil
}

// String is "I/N".
func (s Segment) String() string { return fmt.Sprintf("%d/%d", s.Index, s.N()) }

// N is the number of segments (1 for the zero value).
func (s Segment) N() int { return max(s.Count, 1) }

// Split reports whether the test is divided (more than one segment).
func (s Segment) Split() bool { return s.N() > 1 }

// Share is this segment's part of a total dealt out round robin: item k
// of the total belongs to segment k mod N. The shares of all segments sum
// to total and differ by at most one.
func (s Segment) Share(total int64) int64 {
	n := int64(s.N())
	i := int64(s.Index)
	return total/n + b2i(i < total%n)
}

// Global is the whole test's number of this segment's local number k
// (users, workers, sessions): k*N + Index.
func (s Segment) Global(k uint64) uint64 { return k*uint64(s.N()) + uint64(s.Index) }

// Rate is this segment's part of a rate: rate / N.
func (s Segment) Rate(rate float64) float64 { return rate / float64(s.N()) }

// KeySpan is the size of each segment's range of keys created during the
// run: segment I creates keys base + I*KeySpan + k, k < KeySpan. It leaves
// room for 2^40 new keys per segment in a signed 64-bit key.
const KeySpan int64 = 1 << 40

// Key is the key a scenario creates as its k-th new key during the run,
// counting from base (the first key the run creates when it is whole): in
// a whole test base + k, in a divided one base + Index*KeySpan + k, so that
// segments never create the same key.
func (s Segment) Key(base, k int64) int64 {
	if !s.Split() {
		return base + k
	}
	return base + int64(s.Index)*KeySpan + k
}

// Local is the inverse of Key for this segment: the local number of a
// created key, and whether the key is in this segment's range.
func (s Segment) Local(base, key int64) (int64, bool) {
	off := int64(0)
	if s.Split() {
		off = int64(s.Index) * KeySpan
	}
	k := key - base - off
	return k, k >= 0 && (!s.Split() || k < KeySpan)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
