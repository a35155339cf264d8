package ycsb

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/scalelab/scalelab/scenario/kit"
)

// The hit rate a cache in front of the store should reach, from the key
// chooser alone: for a cache that holds every record it is given (no
// ttl, no eviction) and one session, a read misses exactly when it is the
// first read of its key, so after n independent reads choosing key i with
// probability p_i the expected number of misses is the expected number of
// distinct keys read, E[D] = sum_i (1 - (1 - p_i)^n), and the expected
// hit rate is 1 - E[D]/n.

// ExactRanks is how many of the scrambled zipfian's most popular ranks
// KeyProbabilities sums onto their keys one by one (its rankCutoff): ranks
// 0 to 2^24-1. The generator draws from 10^10 ranks; the rest (each under
// 3 x 10^-9 of the draws, 29 % of them together at theta 0.99) are spread
// evenly over the keys, where a hash spreads them too (see the
// documentation of KeyProbabilities).
const ExactRanks = 1 << 24

// KeyProbabilities returns, for a workload that inserts nothing (a, b, c
// and f), the probability that a read chooses each of records keys, by key
// number, as the sessions' key chooser draws them:
//
//   - "uniform": 1/records each.
//   - "zipfian": YCSB's scrambled zipfian (scrambledZipfian, kit.Zipfian):
//     a rank r of 10^10 is drawn by Gray et al.'s method, whose rank
//     probabilities are P(0) = 1/zetan, P(1) = 0.5^theta/zetan and, for
//     r >= 2, the measure of the uniform draws that the method maps to r,
//     ((r+1)^(1-theta) - r^(1-theta)) / (eta * 10^(10(1-theta))) (not
//     exactly 1/(r+1)^theta/zetan); the key is fnv64(r) mod (records+1)
//     (the chooser's key space has one key more than the records, as YCSB
//     sizes it), and a draw of key number records is drawn again. The
//     probability of each of the ExactRanks most popular ranks goes to its
//     key, collisions included; the remaining ranks' total goes evenly to
//     every key of the chooser's space (a key gets about 10^10/records of
//     them, so the hash's unevenness is a fraction of a percent of that
//     share, and moves the hit rate by less than 10^-4: TestHitRateRanks).
//
// theta is ycsb.zipfian_constant. Other distributions are refused.
func KeyProbabilities(records int, distribution string, theta float64) ([]float64, error) {
	return keyProbabilities(records, distribution, theta, ExactRanks)
}

func keyProbabilities(records int, distribution string, theta float64, rankCutoff uint64) ([]float64, error) {
	if records < 1 {
		return nil, fmt.Errorf("ycsb: %d records: want at least one", records)
	}
	switch distribution {
	case "uniform":
		p := make([]float64, records)
		for i := range p {
			p[i] = 1 / float64(records)
		}
		return p, nil
	case "zipfian":
	default:
		return nil, fmt.Errorf("ycsb: key probabilities of distribution %q: only uniform and zipfian", distribution)
	}
	if !(theta > 0 && theta < 1) {
		return nil, fmt.Errorf("ycsb: zipfian constant %v: want 0 < theta < 1", theta)
	}
	sz := newScrambledZipfian(0, uint64(records)+1, theta)
	q := scrambledKeyProbabilities(&sz.z, sz.n, rankCutoff)
	// the chooser draws again when it gets key number records
	p := q[:records]
	norm := 1 - q[records]
	for i := range p {
		p[i] /= norm
	}
	return p, nil
}

// scrambledKeyProbabilities returns the probability of each of the n
// buckets fnv64(rank) mod n of the ranks z draws: ranks below cutoff one
// by one, the others' total evenly.
func scrambledKeyProbabilities(z *kit.Zipfian, n, cutoff uint64) []float64 {
	items, theta, zetan := z.Items(), z.Theta(), z.Zetan()
	c := 1 - theta
	zeta2 := 1 + math.Pow(0.5, theta)
	// eta exactly as kit.Zipfian computes it
	eta := (1 - math.Pow(2/float64(items), c)) / (1 - zeta2/zetan)
	scale := math.Pow(float64(items), -c) / eta
	cutoff = min(cutoff, items)
	workers := uint64(max(1, runtime.GOMAXPROCS(0)))
	parts := make([][]float64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := make([]float64, n)
			lo, hi := cutoff*w/workers, cutoff*(w+1)/workers
			addRanks(q, lo, hi, theta, zetan, scale)
			parts[w] = q
		}()
	}
	wg.Wait()
	q := parts[0]
	for _, part := range parts[1:] {
		for i, v := range part {
			q[i] += v
		}
	}
	// the ranks from cutoff on: P(rank >= cutoff) = scale * (items^c - cutoff^c)
	if cutoff < items {
		tail := scale * (math.Pow(float64(items), c) - math.Pow(float64(cutoff), c))
		for i := range q {
			q[i] += tail / float64(n)
		}
	}
	return q
}

// ExpectedHitRate returns the expected hit rate of reads independent
// reads choosing key i with probability p[i], through a cache that keeps
// every entry (no ttl, no eviction, fills that never fail) and starts
// empty: 1 - E[D]/reads, E[D] = sum_i (1 - (1 - p_i)^reads) the expected
// number of distinct keys read, each read once from the store. sd bounds
// the standard deviation of the hit rate of one run: the indicators "key i
// was read" are negatively associated (their counts are multinomial), so
// Var[D] <= sum_i q_i (1 - q_i) with q_i = 1 - (1 - p_i)^reads.
func ExpectedHitRate(p []float64, reads int) (rate, sd float64) {
	if reads <= 0 {
		return 0, 0
	}
	n := float64(reads)
	var distinct, variance float64
	for _, pi := range p {
		q := -math.Expm1(n * math.Log1p(-pi)) // 1 - (1-p)^n
		distinct += q
		variance += q * (1 - q)
	}
	return 1 - distinct/n, math.Sqrt(variance) / n
}

// exactPowEvery is how often addRanks computes r^(1-theta) afresh rather
// than from the previous rank's (keeping rounding from adding up).
const exactPowEvery = 4096

// addRanks adds the probability of each rank r in [lo, hi) to its bucket
// fnv64(r) mod len(q): P(0) = 1/zetan, P(1) = 0.5^theta/zetan and, for
// r >= 2, scale * ((r+1)^c - r^c) with c = 1 - theta, computed as
// r^c * expm1(c * log1p(1/r)) (no cancellation), r^c carried from rank to
// rank.
func addRanks(q []float64, lo, hi uint64, theta, zetan, scale float64) {
	n := uint64(len(q))
	c := 1 - theta
	for r := lo; r < min(hi, 2); r++ {
		p := 1 / zetan
		if r == 1 {
			p = math.Pow(0.5, theta) / zetan
		}
		q[fnv64(r)%n] += p
	}
	var rc float64 // r^c
	for r := max(lo, 2); r < hi; r++ {
		x := float64(r)
		if (r-lo)%exactPowEvery == 0 || r == 2 {
			rc = math.Exp(c * math.Log(x))
		}
		var e float64 // (1 + 1/r)^c - 1
		if r < 1<<16 {
			e = math.Expm1(c * math.Log1p(1/x))
		} else {
			// the series of log1p and expm1, exact to double precision
			// for 1/r < 2^-16
			y := 1 / x
			z := c * y * (1 - y*(0.5-y/3))
			e = z * (1 + z*(0.5+z/6))
		}
		q[fnv64(r)%n] += scale * rc * e
		rc += rc * e
	}
}
