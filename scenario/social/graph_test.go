package social

import (
	"math"
	"slices"
	"testing"

	"github.com/scalelab/scalelab/scenario/scenariotest"
)

// The graph tests check BuildKE against the Klemm-Eguiluz model's known
// behaviour on fixed seeds, so they cannot flake: the bounds leave room for
// the finite-size deviations seen across seeds, not for a broken model.

func TestKEEdgesAndMeanDegree(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n, m int
		mu   float64
	}{{1, 3, 0}, {3, 5, 0}, {10, 3, 0.5}, {1000, 1, 0}, {1000, 2, 0.3}, {20000, 10, 0.1}, {5000, 4, 1}} {
		g, err := BuildKE(c.n, c.m, c.mu, 7)
		if err != nil {
			t.Fatal(err)
		}
		m0 := min(c.m, c.n)
		want := m0*(m0-1)/2 + (c.n-m0)*c.m
		if g.Nodes() != c.n || g.Edges() != want {
			t.Errorf("n=%d m=%d: %d nodes, %d edges, want %d", c.n, c.m, g.Nodes(), g.Edges(), want)
		}
		if c.n > 100*c.m {
			if d := g.MeanDegree(); math.Abs(d-2*float64(c.m)) > 0.01*float64(c.m) {
				t.Errorf("n=%d m=%d: mean degree %.3f, want about %d", c.n, c.m, d, 2*c.m)
			}
		}
		// Simple undirected graph: sorted adjacency, no self-loops or
		// duplicates, every edge seen from both ends.
		for v := range g.Nodes() {
			f := g.Friends(v)
			if !slices.IsSorted(f) {
				t.Fatalf("friends of %d not sorted", v)
			}
			for i, u := range f {
				if int(u) == v || (i > 0 && f[i-1] == u) {
					t.Fatalf("n=%d m=%d: node %d: self-loop or duplicate link to %d", c.n, c.m, v, u)
				}
				if _, ok := slices.BinarySearch(g.Friends(int(u)), uint32(v)); !ok {
					t.Fatalf("link %d-%d missing at %d", v, u, u)
				}
			}
			if c.n > c.m && g.Degree(v) < min(c.m, c.n-1) {
				t.Fatalf("node %d has %d friends, fewer than m=%d", v, g.Degree(v), c.m)
			}
		}
	}
}

// TestKEPowerLawTail: for mu = 0 (and a = m) the degrees have a power-law
// tail P(k) ~ k^-3. The maximum-likelihood exponent over k >= 3m lies near
// 3, and the complementary distribution falls by about 2^(gamma-1) = 4 per
// doubling of k.
func TestKEPowerLawTail(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{1, 2} {
		g, err := BuildKE(50_000, 10, 0, seed)
		if err != nil {
			t.Fatal(err)
		}
		if gamma := g.DegreeExponent(30); gamma < 2.7 || gamma > 3.2 {
			t.Errorf("seed %d: degree exponent %.3f, want about 3", seed, gamma)
		}
		ccdf := func(k int) float64 {
			c := 0
			for v := range g.Nodes() {
				if g.Degree(v) >= k {
					c++
				}
			}
			return float64(c)
		}
		for _, k := range []int{40, 80, 160} {
			if r := ccdf(k) / ccdf(2*k); r < 3 || r > 5.5 {
				t.Errorf("seed %d: P(K>=%d)/P(K>=%d) = %.2f, want about 4", seed, k, 2*k, r)
			}
		}
		// A scale-free graph has hubs far above the mean.
		if mx := g.MaxDegree(); mx < 500 {
			t.Errorf("seed %d: largest degree %d: no hubs", seed, mx)
		}
	}
}

// TestKEClustering: the clustering coefficient is about 5/6 for mu = 0 and
// falls as mu grows, to almost nothing at mu = 1 (preferential attachment
// alone, the Barabasi-Albert model); the random links shorten paths (the
// small-world regime).
func TestKEClustering(t *testing.T) {
	t.Parallel()
	mus := []float64{0, 0.1, 0.3, 0.6, 1}
	cs := make([]float64, len(mus))
	dist := make([]float64, len(mus))
	for i, mu := range mus {
		g, err := BuildKE(20_000, 10, mu, 3)
		if err != nil {
			t.Fatal(err)
		}
		cs[i] = g.Clustering()
		dist[i] = g.MeanDistance(5, 9)
		t.Logf("mu=%.1f: clustering %.3f, mean distance %.2f, exponent %.2f", mu, cs[i], dist[i], g.DegreeExponent(30))
	}
	if cs[0] < 0.78 || cs[0] > 0.87 {
		t.Errorf("mu=0: clustering %.3f, want about 5/6", cs[0])
	}
	for i := 1; i < len(mus); i++ {
		if cs[i] > cs[i-1]-0.04 {
			t.Errorf("clustering does not fall from mu=%g (%.3f) to mu=%g (%.3f)", mus[i-1], cs[i-1], mus[i], cs[i])
		}
	}
	if cs[len(cs)-1] > 0.02 {
		t.Errorf("mu=1: clustering %.3f, want near 0", cs[len(cs)-1])
	}
	if dist[1] >= dist[0] {
		t.Errorf("mean distance %.2f at mu=0.1, not below %.2f at mu=0", dist[1], dist[0])
	}
	if dist[1] > 2*math.Log(20_000)/math.Log(20) {
		t.Errorf("mean distance %.2f at mu=0.1: not a small world", dist[1])
	}
}

func TestKEDeterministic(t *testing.T) {
	t.Parallel()
	scenariotest.Seeded(t, "graphs", 11, 12, func(seed uint64) []uint32 {
		g, _ := BuildKE(3000, 4, 0.2, seed)
		return slices.Concat(g.off, g.adj) // off has one entry per user and one more
	})
}

func TestKERejectsBadParameters(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n, m int
		mu   float64
	}{{0, 3, 0}, {10, 0, 0}, {10, 2, -0.1}, {10, 2, 1.5}, {10, 2, math.NaN()}} {
		if _, err := BuildKE(c.n, c.m, c.mu, 1); err == nil {
			t.Errorf("BuildKE(%d, %d, %g) accepted", c.n, c.m, c.mu)
		}
	}
}

// BenchmarkBuildKE builds the default graph: 50,000 users, m = 10, mu = 0.1.
func BenchmarkBuildKE(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := BuildKE(50_000, 10, 0.1, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGraphStats computes the report's figures for the default graph.
func BenchmarkGraphStats(b *testing.B) {
	g, err := BuildKE(50_000, 10, 0.1, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		graphStats(g)
	}
}
