package audit

import (
	"testing"
)

// BenchmarkCheckBlocks is the live check's cost per audited update: the
// decoding of a block of records (16 sessions' updates of 10,000 keys, as
// a shard's buffer holds them) and the register state it updates, without
// compression or the file.
func BenchmarkCheckBlocks(b *testing.B) {
	const perBlock = 50_000
	var d deltas
	var p []byte
	ver, t := int64(1), int64(0)
	x := uint64(1)
	for i := range perBlock {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		key := int64(x % 10_000)
		p = appendRegInv(p, &d, kindRegWrite, key, ver+int64(i), t)
		t += 3
		p = appendRegOut(p, &d, kindRegOK, 0, ver+int64(i), t)
		t += 1
	}
	h := newHistory()
	dec := newDecoder(h.addSpan, h.addRegister)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := dec.payload(p); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*perBlock), "ns/update")
}
