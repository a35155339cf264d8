package ycsb

import (
	"math"
	"testing"

	"github.com/scalelab/scalelab/scenario/scenariotest"
)

// testConfig is the configuration of the assignments, failing t on error.
func testConfig(t *testing.T, assignments ...string) *config {
	t.Helper()
	cfg, err := configFrom(scenariotest.Settings(t, &Scenario{}, assignments...))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// chooser returns a session of a workload of the assignments, to draw
// keys with the chooser the sessions use (no store: only pickKey runs).
func chooser(t *testing.T, seed uint64, assignments ...string) *Session {
	t.Helper()
	return newWorkload(testConfig(t, assignments...), nil, 1).newSession(seed)
}

// zipfProbabilities is KeyProbabilities of the zipfian chooser over
// records with skew theta, failing t on error or unless they sum to 1.
func zipfProbabilities(t *testing.T, records int, theta float64) []float64 {
	t.Helper()
	p, err := KeyProbabilities(records, "zipfian", theta)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, v := range p {
		sum += v
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Fatalf("theta %g: probabilities sum to %.12f", theta, sum)
	}
	return p
}

// TestExpectedHitRateUniform: with uniform keys the expected hit rate has
// the closed form 1 - N (1 - (1 - 1/N)^n) / n.
func TestExpectedHitRateUniform(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ records, reads int }{{1, 10}, {1000, 1000}, {5000, 20000}, {100000, 50}} {
		p, err := KeyProbabilities(tc.records, "uniform", 0)
		if err != nil {
			t.Fatal(err)
		}
		got, sd := ExpectedHitRate(p, tc.reads)
		N, n := float64(tc.records), float64(tc.reads)
		want := 1 - N*(1-math.Pow(1-1/N, n))/n
		if math.Abs(got-want) > 1e-10 || sd < 0 || sd > 0.5*math.Sqrt(N)/n+1e-12 {
			t.Errorf("%d records, %d reads: %.15f (sd %g), want %.15f", tc.records, tc.reads, got, sd, want)
		}
	}
	if p, _ := KeyProbabilities(10, "uniform", 0); len(p) != 10 {
		t.Fatalf("%d probabilities for 10 records", len(p))
	} else if rate, sd := ExpectedHitRate(p, 0); rate != 0 || sd != 0 {
		t.Errorf("no reads: hit rate %v, sd %v", rate, sd)
	}
	for _, bad := range []struct {
		records int
		dist    string
		theta   float64
	}{{0, "uniform", 0}, {10, "latest", 0.99}, {10, "hotspot", 0.99}, {10, "zipfian", 1}, {10, "zipfian", 0}} {
		if _, err := KeyProbabilities(bad.records, bad.dist, bad.theta); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// TestKeyProbabilitiesSimulated draws keys with the sessions' own chooser
// (workload c, zipfian over 1,000 records) and compares each key's
// frequency with KeyProbabilities (Pearson's chi-square over every key),
// and the distinct keys of many runs of n reads with ExpectedHitRate.
func TestKeyProbabilitiesSimulated(t *testing.T) {
	t.Parallel()
	const records, draws = 1000, 2_000_000
	p := zipfProbabilities(t, records, ycsbTheta)
	s := chooser(t, 11, "ycsb.workload=c", "ycsb.records=1000")
	counts := make([]float64, records)
	for range draws {
		counts[s.nextKeynum()]++
	}
	chi := 0.0
	for i, c := range counts {
		e := p[i] * draws
		chi += (c - e) * (c - e) / e
	}
	t.Logf("chi-square %.0f over %d keys (%d draws)", chi, records, draws)
	// 999 degrees of freedom: mean 999, standard deviation 44.7. The
	// ideal zipfian (1/(r+1)^theta/zeta) instead of the ranks the method
	// draws gives a chi-square near 2,900 here.
	if chi > 999+6*44.7 {
		t.Errorf("chi-square %.0f over %d keys: the chooser does not draw KeyProbabilities", chi, records)
	}

	// runs of n reads: the mean hit rate against the expectation
	const runs, n = 300, 3000
	want, sd := ExpectedHitRate(p, n)
	seen := make([]int, records)
	var mean, sq float64
	for run := range runs {
		s := chooser(t, uint64(1000+run), "ycsb.workload=c", "ycsb.records=1000")
		distinct := 0
		for range n {
			k := s.nextKeynum()
			if seen[k] != run+1 {
				seen[k] = run + 1
				distinct++
			}
		}
		rate := 1 - float64(distinct)/n
		mean += rate / runs
		sq += rate * rate / runs
	}
	emp := math.Sqrt(max(0, sq-mean*mean))
	t.Logf("%d runs of %d reads over %d records: mean hit rate %.5f (sd %.5f), expected %.5f (sd at most %.5f)", runs, n, records, mean, emp, want, sd)
	if math.Abs(mean-want) > 5*sd/math.Sqrt(runs) {
		t.Errorf("mean hit rate %.5f, expected %.5f +- %.5f", mean, want, 5*sd/math.Sqrt(runs))
	}
	if emp > 1.3*sd {
		t.Errorf("the hit rate's standard deviation %.5f is over its bound %.5f", emp, sd)
	}
}

// TestHitRateRanks: the ranks beyond ExactRanks, spread evenly, move the
// expected hit rate by less than 10^-4 (a sixteenth of them as many, 2^20,
// already does; the rest is the same shape, further out).
func TestHitRateRanks(t *testing.T) {
	t.Parallel()
	const records, reads = 5000, 20000
	exact := zipfProbabilities(t, records, ycsbTheta)
	fewer, err := keyProbabilities(records, "zipfian", ycsbTheta, ExactRanks/16)
	if err != nil {
		t.Fatal(err)
	}
	a, sd := ExpectedHitRate(exact, reads)
	b, _ := ExpectedHitRate(fewer, reads)
	t.Logf("%d records, %d reads: %.6f (sd %.5f) with %d ranks exact, %.6f with %d", records, reads, a, sd, ExactRanks, b, ExactRanks/16)
	if math.Abs(a-b) > 1e-4 || a < 0.5 || a > 0.95 {
		t.Errorf("expected hit rate %.6f with %d exact ranks, %.6f with %d", a, ExactRanks, b, ExactRanks/16)
	}
	// theta other than YCSB's: zeta computed, probabilities still sum to 1
	zipfProbabilities(t, 300, 0.5)
	if _, err := KeyProbabilities(-1, "zipfian", 0.5); err == nil {
		t.Error("negative records accepted")
	}
}
