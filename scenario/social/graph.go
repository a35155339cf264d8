package social

import (
	"github.com/scalelab/scalelab/scenario/kit"

	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// Graph is an undirected friendship graph over users 0..n-1 in compressed
// sparse rows: the friends of v are adj[off[v]:off[v+1]], sorted. It is
// read-only once built, so sessions share it without locks. At 50,000
// users and m = 10 it takes about 4 MB.
type Graph struct {
	off []uint32
	adj []uint32
	// M and Mu are the Klemm-Eguiluz parameters it was built with.
	M  int
	Mu float64
	// Build is how long BuildKE took.
	Build time.Duration
}

// maxGraphNodes bounds the node count: offsets are 32-bit.
const maxGraphNodes = 1 << 28

// BuildKE builds a Klemm-Eguiluz scale-free small-world graph over n nodes
// from seed (Klemm and Eguiluz, "Highly clustered scale-free networks",
// Phys. Rev. E 65, 036123, 2002, and "Growing scale-free networks with
// small-world behavior", Phys. Rev. E 65, 057102, 2002):
//
//   - Nodes 0..m-1 start fully connected and active.
//   - Each new node links to the m active nodes; each link is rewired with
//     probability mu to a node chosen with probability proportional to its
//     degree (preferential attachment, never a node already linked).
//   - The new node becomes active and one of the m+1 active nodes is
//     deactivated with probability proportional to 1/(a + k), k the links
//     it received from newer nodes (its in-degree in the papers), a = m.
//
// The mean degree tends to 2m. For mu = 0 the in-degrees follow
// P(k) ~ (k+a)^-(2+a/m), so with a = m the degrees have a power-law tail
// P(k) ~ k^-3, and the clustering
// coefficient tends to 5/6; as mu grows, clustering falls and paths
// shorten (the small-world regime), while the degree tail stays a power
// law.
func BuildKE(n, m int, mu float64, seed uint64) (*Graph, error) {
	switch {
	case n < 1 || n > maxGraphNodes:
		return nil, fmt.Errorf("social graph: %d users: must be 1 to %d", n, maxGraphNodes)
	case m < 1:
		return nil, fmt.Errorf("social graph: m = %d active nodes: must be at least 1", m)
	case !(mu >= 0 && mu <= 1):
		return nil, fmt.Errorf("social graph: mu = %g: must be in [0, 1]", mu)
	}
	start := time.Now()
	m0 := min(m, n)
	edges := m0*(m0-1)/2 + (n-m0)*m
	if edges > math.MaxUint32/2 {
		return nil, errors.New("social graph: too many edges for 32-bit offsets: lower social.graph_m or social.users")
	}
	r := kit.NewRNG(seed ^ 0x6b65_6772_6170_68) // "kegraph"
	// ends holds both end points of every edge: a uniform draw from it picks
	// a node with probability proportional to its degree.
	ends := make([]uint32, 0, 2*edges)
	deg := make([]uint32, n)
	in := make([]uint32, n) // links received from newer nodes
	link := func(a, b int) {
		ends = append(ends, uint32(a), uint32(b))
		deg[a]++
		deg[b]++
	}
	active := make([]int, 0, m+1)
	for i := range m0 {
		for j := range i {
			link(i, j)
		}
		active = append(active, i)
	}
	targets := make([]int, 0, m)
	weights := make([]float64, m+1)
	a := float64(m)
	for i := m0; i < n; i++ {
		targets = targets[:0]
		rewired := 0
		for _, j := range active {
			if mu > 0 && r.Float64() < mu {
				rewired++
			} else {
				targets = append(targets, j)
			}
		}
		for range rewired {
			targets = append(targets, pickPreferential(&r, ends, targets, i))
		}
		for _, t := range targets {
			link(i, t)
			in[t]++
		}
		// Activate i, then deactivate one of the m+1 active nodes.
		active = append(active, i)
		total := 0.0
		for k, v := range active {
			weights[k] = 1 / (a + float64(in[v]))
			total += weights[k]
		}
		u, drop := r.Float64()*total, len(active)-1
		for k := range active {
			if u < weights[k] {
				drop = k
				break
			}
			u -= weights[k]
		}
		active[drop] = active[len(active)-1]
		active = active[:len(active)-1]
	}

	g := &Graph{M: m, Mu: mu, off: make([]uint32, n+1), adj: make([]uint32, len(ends))}
	for v, d := range deg {
		g.off[v+1] = g.off[v] + d
	}
	fill := slices.Clone(g.off[:n])
	for e := 0; e < len(ends); e += 2 {
		a, b := ends[e], ends[e+1]
		g.adj[fill[a]] = b
		fill[a]++
		g.adj[fill[b]] = a
		fill[b]++
	}
	for v := range n {
		slices.Sort(g.Friends(v))
	}
	g.Build = time.Since(start)
	return g, nil
}

// pickPreferential returns a node other than self and not in taken, chosen
// with probability proportional to its degree (uniformly when no edge
// exists yet).
func pickPreferential(r *kit.RNG, ends []uint32, taken []int, self int) int {
	for tries := 0; ; tries++ {
		var v int
		if len(ends) == 0 || tries >= 1000 {
			v = int(r.Intn(uint64(self))) // nodes 0..self-1 exist
		} else {
			v = int(ends[r.Intn(uint64(len(ends)))])
		}
		if v != self && !slices.Contains(taken, v) {
			return v
		}
	}
}

// Nodes returns the number of nodes.
func (g *Graph) Nodes() int { return len(g.off) - 1 }

// Edges returns the number of undirected edges.
func (g *Graph) Edges() int { return len(g.adj) / 2 }

// Degree returns the number of friends of v.
func (g *Graph) Degree(v int) int { return int(g.off[v+1] - g.off[v]) }

// Friends returns the friends of v, sorted; the slice must not be modified.
func (g *Graph) Friends(v int) []uint32 { return g.adj[g.off[v]:g.off[v+1]:g.off[v+1]] }

// MeanDegree returns the mean number of friends.
func (g *Graph) MeanDegree() float64 { return float64(len(g.adj)) / float64(g.Nodes()) }

// MaxDegree returns the largest number of friends.
func (g *Graph) MaxDegree() int {
	mx := 0
	for v := range g.Nodes() {
		mx = max(mx, g.Degree(v))
	}
	return mx
}

// Clustering returns the average local clustering coefficient (Watts and
// Strogatz) over the nodes with at least two friends: for each, the share
// of pairs of its friends that are friends themselves.
func (g *Graph) Clustering() float64 {
	n := g.Nodes()
	mark := make([]uint32, n)
	sum, count := 0.0, 0
	for v := range n {
		friends := g.Friends(v)
		k := len(friends)
		if k < 2 {
			continue
		}
		stamp := uint32(v + 1)
		for _, u := range friends {
			mark[u] = stamp
		}
		t := 0 // each triangle through v counted twice
		for _, u := range friends {
			for _, w := range g.Friends(int(u)) {
				if mark[w] == stamp {
					t++
				}
			}
		}
		sum += float64(t) / float64(k*(k-1))
		count++
	}
	if count == 0 {
		return 0
	}
	return sum / float64(count)
}

// DegreeExponent estimates the exponent gamma of the degree distribution's
// tail P(k) ~ k^-gamma from the degrees k >= kmin by maximum
// likelihood (the continuous estimator of Clauset, Shalizi and Newman,
// with the discrete half-step correction). It returns NaN when fewer than
// 50 nodes have such degrees.
func (g *Graph) DegreeExponent(kmin int) float64 {
	xmin := float64(kmin) - 0.5
	sum, count := 0.0, 0
	for v := range g.Nodes() {
		if k := g.Degree(v); k >= kmin {
			sum += math.Log(float64(k) / xmin)
			count++
		}
	}
	if count < 50 || sum == 0 {
		return math.NaN()
	}
	return 1 + float64(count)/sum
}

// MeanDistance estimates the mean shortest-path length between connected
// nodes by breadth-first search from sources nodes drawn from seed: the
// small-world property is a mean distance growing like log n.
func (g *Graph) MeanDistance(sources int, seed uint64) float64 {
	n := g.Nodes()
	if n < 2 {
		return 0
	}
	r := kit.NewRNG(seed)
	dist := make([]int32, n)
	queue := make([]uint32, 0, n)
	total, pairs := 0.0, 0
	for range sources {
		for i := range dist {
			dist[i] = -1
		}
		s := uint32(r.Intn(uint64(n)))
		dist[s] = 0
		queue = append(queue[:0], s)
		for h := 0; h < len(queue); h++ {
			v := queue[h]
			for _, u := range g.Friends(int(v)) {
				if dist[u] < 0 {
					dist[u] = dist[v] + 1
					total += float64(dist[u])
					pairs++
					queue = append(queue, u)
				}
			}
		}
	}
	if pairs == 0 {
		return 0
	}
	return total / float64(pairs)
}
