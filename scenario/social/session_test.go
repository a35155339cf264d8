package social

import (
	"github.com/scalelab/scalelab/scenario/kit"
	"github.com/scalelab/scalelab/scenario/scenariotest"

	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
)

func TestRegistered(t *testing.T) {
	t.Parallel()
	s, err := scenario.Lookup(Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"memory", "null", "sqlite", "postgres", "opensearch", "elasticsearch", "cassandra"} {
		if !scenario.Supports(s, e) {
			t.Errorf("social does not support %s", e)
		}
	}
	for _, sp := range s.Settings() {
		if (!strings.HasPrefix(sp.Key, Name+".") && !strings.HasPrefix(sp.Key, "cache.")) || sp.Description == "" {
			t.Errorf("setting %+v", sp)
		}
		if _, err := sp.Parse(sp.Default); err != nil {
			t.Errorf("%s: default %q: %v", sp.Key, sp.Default, err)
		}
	}
}

// TestMixProportions draws a million operations of each mix on the null
// engine: each proportion within 5 standard deviations of the study's.
func TestMixProportions(t *testing.T) {
	t.Parallel()
	for mix, props := range mixes {
		t.Run(mix, func(t *testing.T) {
			t.Parallel()
			w := openEngine(t, "null").Workload(t, KeyMix+"="+mix, KeyUsers+"=1000")
			s := w.NewSession(0, 5).(*Session)
			const n = 1_000_000
			var counts [numOps]int
			for range n {
				op, _ := s.Next()
				counts[op]++
			}
			for op, p := range props {
				got := float64(counts[op]) / n
				sd := math.Sqrt(p * (1 - p) / n)
				if math.Abs(got-p) > 5*sd+1e-9 {
					t.Errorf("%s: %s share %.5f, want %.5f", mix, operationNames[op], got, p)
				}
			}
		})
	}
}

// TestUniformAndZipfian: uniform keys cover the users evenly; zipfian ones
// concentrate on a few popular users spread over the key space.
func TestUniformAndZipfian(t *testing.T) {
	t.Parallel()
	const users, draws = 1000, 200_000
	hist := func(keys string) []int {
		w := openEngine(t, "null").Workload(t, KeyKeys+"="+keys, KeyUsers+"=1000", KeyMix+"=d2")
		s := w.NewSession(0, 9).(*Session)
		h := make([]int, users)
		for range draws {
			s.Next()
			if s.n >= users {
				t.Fatalf("%s chose user %d of %d", keys, s.n, users)
			}
			h[s.n]++
		}
		return h
	}
	u := hist(KeysUniform)
	if mn, mx := slices.Min(u), slices.Max(u); mn < 120 || mx > 280 { // mean 200, sd 14
		t.Errorf("uniform: counts from %d to %d, want about 200", mn, mx)
	}
	z := hist(KeysZipfian)
	sorted := slices.Clone(z)
	slices.Sort(sorted)
	slices.Reverse(sorted)
	top := 0
	for _, c := range sorted[:10] {
		top += c
	}
	// Zipf(0.99) over 1000 items: the 10 most popular take about 39%.
	if share := float64(top) / draws; share < 0.3 || share > 0.5 {
		t.Errorf("zipfian: top 10 users have %.2f of the draws", share)
	}
	if hot := slices.Index(z, sorted[0]); hot == 0 {
		t.Error("zipfian: the hottest user is user 0: not scrambled")
	}
}

// TestWalk: with locality 0.9 about 90% of steps go to a friend of the
// current user, the rest jump; the report's figures agree with the path.
func TestWalk(t *testing.T) {
	t.Parallel()
	for _, loc := range []string{"0.9", "0.5", "0"} {
		w := openEngine(t, "null").Workload(t, KeyKeys+"=social", KeyUsers+"=20000", KeyLocality+"="+loc, KeyMix+"=d2")
		g := w.Graph()
		s := w.NewSession(0, 3).(*Session)
		const steps = 50_000
		prev, friends := uint64(0), 0
		for i := range steps {
			s.Next()
			if i > 0 {
				if _, ok := slices.BinarySearch(g.Friends(int(prev)), uint32(s.n)); ok {
					friends++
				}
			}
			prev = s.n
		}
		want := 0.0
		switch loc {
		case "0.9":
			want = 0.9
		case "0.5":
			want = 0.5
		}
		// Jumps land on a friend with probability degree/users (about 0.001).
		if got := float64(friends) / (steps - 1); math.Abs(got-want) > 0.01 {
			t.Errorf("locality %s: %.4f of steps to a friend", loc, got)
		}
		walk := w.Report()["walk"].(map[string]any)
		if walk["steps"].(int64) != steps || walk["starts"].(int64) != 1 {
			t.Errorf("locality %s: report %v", loc, walk)
		}
		if fs := walk["friend_share"].(float64); math.Abs(fs-want) > 0.01 {
			t.Errorf("locality %s: reported friend share %.4f", loc, fs)
		}
		gr := w.Report()["graph"].(map[string]any)
		if gr["nodes"] != 20000 || gr["m"] != 10 || math.Abs(gr["mean_degree"].(float64)-20) > 0.1 {
			t.Errorf("graph report: %v", gr)
		}
	}
}

// TestWalkAvoidsDeletedUsers: the chooser does not pick users it knows are
// deleted; with every friend of the current user deleted, it jumps.
func TestWalkAvoidsDeletedUsers(t *testing.T) {
	t.Parallel()
	w := openEngine(t, "null").Workload(t, KeyKeys+"=social", KeyUsers+"=2000", KeyLocality+"=1", KeyMix+"=d2")
	for n := uint64(0); n < 2000; n += 2 {
		w.ks.markGone(n)
	}
	s := w.NewSession(0, 3).(*Session)
	for range 10_000 {
		s.Next()
		if s.n%2 == 0 {
			t.Fatalf("picked deleted user %d", s.n)
		}
	}
	// Delete every friend of the current user: the next step jumps.
	for _, f := range w.Graph().Friends(int(s.n)) {
		w.ks.markGone(uint64(f))
	}
	dead := w.deadEnds.Load()
	s.Next()
	if w.deadEnds.Load() != dead+1 {
		t.Error("a walk at a user without live friends did not count a dead end")
	}
}

// TestBadSettings: bad values name the key and what is allowed.
func TestBadSettings(t *testing.T) {
	t.Parallel()
	e := openEngine(t, "null")
	for _, a := range []string{KeyKeys + "=friends", KeyMix + "=d3", KeyLocality + "=1.5", KeyGraphM + "=0", KeyZipfian + "=1"} {
		err := e.Settings.Apply(a)
		if !errors.Is(err, setting.ErrBadValue) || !strings.Contains(err.Error(), strings.Split(a, "=")[0]) {
			t.Errorf("%s: %v", a, err)
		}
	}
	_, err := e.Open(KeyKeys+"=social", KeyUsers+"=100000000", KeyGraphM+"=100")
	if !errors.Is(err, setting.ErrBadValue) || !strings.Contains(err.Error(), KeyGraphM) {
		t.Errorf("a graph too large: %v", err)
	}
}

// TestNullRun: sessions on the null engine never fail, and checks pass.
func TestNullRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := openEngine(t, "null").Workload(t, KeyKeys+"=social", KeyUsers+"=5000")
	w.ops = kit.NewChooser(testMix[:])
	if err := w.Load(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	s := w.NewSession(1, 1)
	for range 10_000 {
		op, _ := s.Next()
		if err := s.Do(ctx); err != nil {
			t.Fatalf("%s: %v (%v)", operationNames[op], err, metrics.ClassOf(err))
		}
	}
	if err := w.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestSessionOps: a session ends after social.session_ops operations.
func TestSessionOps(t *testing.T) {
	t.Parallel()
	w := openEngine(t, "null").Workload(t, KeySessionOps+"=3", KeyUsers+"=10")
	s := w.NewSession(0, 1)
	for i := range 4 {
		if _, ok := s.Next(); ok != (i < 3) {
			t.Fatalf("Next %d: ok=%v", i, ok)
		}
	}
	// The third operation was prepared and not done: Do still runs it.
	if err := s.Do(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestLoadCancelled: Load stops with the context's error.
func TestLoadCancelled(t *testing.T) {
	t.Parallel()
	scenariotest.LoadCancels(t, openEngine(t, "memory").Workload(t, KeyUsers+"=100000"))
}

// TestUsersDeterministic: a user depends on the seed and its number only.
func TestUsersDeterministic(t *testing.T) {
	t.Parallel()
	a, b, c := NewUser(1, 77), NewUser(1, 77), NewUser(2, 77)
	if a != b || a == c {
		t.Errorf("users: %+v %+v %+v", a, b, c)
	}
	if a.ID != "u0000000077" || a.Name != nameOf(1, 77) || len(a.Doc()) < 250 {
		t.Errorf("user 77: %+v (%d bytes)", a, len(a.Doc()))
	}
	if n, ok := KeyNumber(a.ID); !ok || n != 77 {
		t.Errorf("KeyNumber(%s) = %d %v", a.ID, n, ok)
	}
	for _, bad := range []string{"", "u", "x0000000077", "u00000000777", "u000000007a"} {
		if _, ok := KeyNumber(bad); ok {
			t.Errorf("KeyNumber(%q) accepted", bad)
		}
	}
}
