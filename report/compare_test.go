package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	base, cont := filepath.Join(root, "base"), filepath.Join(root, "contender")
	synth{intervals: 5, ops: []string{"read", "update"}, perOp: 300, open: true}.write(t, base)
	synth{intervals: 5, ops: []string{"read", "update"}, perOp: 600, errEvery: 50, open: true}.write(t, cont)

	terminal, page, path := compareBoth(t, root, base, cont)
	for _, w := range []string{"baseline: " + base, "contender 1: " + cont, "ops/s", "+96.0%", "p99 ms", "from 0"} {
		if !strings.Contains(terminal, w) {
			t.Errorf("terminal comparison lacks %q:\n%s", w, terminal)
		}
	}
	for _, w := range []string{"Comparison of 2 runs", "read: latency by percentile", "update: latency by percentile",
		"contender service time", "Throughput over time", `class="better"`, `class="worse"`, "In every run, the scenario, engine, load, every tier and every setting are the same"} {
		if !strings.Contains(page, w) {
			t.Errorf("compare page lacks %q", w)
		}
	}
	if err := WriteCompare(path, []string{base}); err == nil {
		t.Error("one run is no comparison")
	}
	if err := WriteCompare(path, []string{base, filepath.Join(root, "none")}); err == nil {
		t.Error("no error for a missing run")
	}
}

func TestDelta(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		base, v      float64
		higherBetter bool
		s, class     string
	}{
		{100, 150, true, "+50.0%", "better"},
		{100, 150, false, "+50.0%", "worse"},
		{100, 99.5, false, "-0.5%", "same"},
		{0, 0, true, "±0", "same"},
		{0, 3, true, "from 0", "better"},
		{0, 0.02, false, "from 0", "worse"},
	} {
		s, c := delta(tc.base, tc.v, tc.higherBetter)
		if s != tc.s || c != tc.class {
			t.Errorf("delta(%v, %v, %v) = %s %s, want %s %s", tc.base, tc.v, tc.higherBetter, s, c, tc.s, tc.class)
		}
	}
}

func TestParseSeries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		data    string
		rows    int
		torn    bool
		wantErr bool
	}{
		{"two ops", "t_s,interval_s,op,count,errors,throughput_per_s,p50_ms,p99_ms\n1.0,1.0,a,5,0,5.0,1.2,\n1.0,1.0,b,3,1,3.0,,\n", 2, false, false},
		{"torn", "t_s,interval_s,op,count\n1.0,1.0,a,5\n2.0,1.0,a,", 1, true, false},
		{"extra column", "t_s,op,count,new_col\n1,a,2,x\n", 1, false, false},
		{"no op column", "t_s,count\n1,2\n", 0, false, true},
		{"bad time", "t_s,op,count\nx,a,1\n", 0, false, true},
		{"empty", "", 0, false, false},
	} {
		s, err := parseSeries([]byte(tc.data))
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err %v", tc.name, err)
			continue
		}
		if err != nil {
			continue
		}
		n := 0
		for _, r := range s.Rows {
			n += len(r)
		}
		if n != tc.rows || s.Torn != tc.torn {
			t.Errorf("%s: %d rows torn %v", tc.name, n, s.Torn)
		}
	}
}

// TestCompareTiers: a cache tier in one run only, and a tier setting that
// differs, show in both comparisons instead of "the same".
func TestCompareTiers(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	base, cont := filepath.Join(root, "base"), filepath.Join(root, "cached")
	for _, d := range []string{base, cont} {
		synth{intervals: 3, ops: []string{"read"}, perOp: 300}.write(t, d)
	}
	r := resultstest.Read(t, cont)
	r.Tiers = []results.Tier{{Role: "cache", Engine: "redis", Server: &results.Server{Version: "7.0.15"},
		Cluster: &results.ClusterRef{Name: "r1", Nodes: 1}, Settings: map[string]string{"redis.pool_size": "64", "redis.db": "0"}, Changed: []string{"redis.pool_size"}}}
	resultstest.Write(t, cont, r)
	terminal, page, _ := compareBoth(t, root, base, cont)
	for _, w := range []string{"differences (baseline | contenders):", "  tier cache: (none) | redis 7.0.15, cluster r1 (1 node(s))", "  cache: redis.pool_size: (none) | 64"} {
		if !strings.Contains(terminal, w) {
			t.Errorf("terminal comparison lacks %q:\n%s", w, terminal)
		}
	}
	if strings.Contains(page, "is the same in every run") || !strings.Contains(page, "tier cache") || !strings.Contains(page, "redis 7.0.15, cluster r1") {
		t.Errorf("the page does not show the cache tier that differs")
	}
	// the same runs: nothing differs, and both say so
	var out bytes.Buffer
	if err := CompareTerminal(&out, []string{base, base}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "differences: none") {
		t.Errorf("identical runs:\n%s", out.String())
	}
}

// TestCompareWhatRan: another load model with other parameters, another
// engine and another segment count are named in both comparisons, and
// "none" is said only of runs that ran the same thing.
func TestCompareWhatRan(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	base, cont, same := filepath.Join(root, "closed"), filepath.Join(root, "rate"), filepath.Join(root, "same")
	for _, d := range []string{base, cont, same} {
		synth{intervals: 3, ops: []string{"read"}, perOp: 300}.write(t, d)
	}
	r := resultstest.Read(t, cont)
	r.Engine, r.Server = "sqlite", &results.Server{Version: "3.45.1"}
	r.Load.Model, r.Load.Open = "rate", true
	r.Load.Params = map[string]any{"rate_per_s": 5000, "arrivals": "constant"}
	r.Load.DurationS, r.Load.Seed = 10, 7
	r.Merged = &results.Merged{Count: 4}
	resultstest.Write(t, cont, r)
	terminal, page, _ := compareBoth(t, root, base, cont)
	want := []string{"differences (baseline | contenders):", "  engine: memory | sqlite 3.45.1", "  load model: closed | rate",
		"  load: users: 8 | (none)", "  load: rate_per_s: (none) | 5000", "  load: arrivals: (none) | constant",
		"  duration: 3 s | 10 s", "  seed: 1 | 7", "  segments: 1 | 4 merged"}
	for _, w := range want {
		if !strings.Contains(terminal, w) {
			t.Errorf("terminal comparison lacks %q:\n%s", w, terminal)
		}
	}
	if strings.Contains(terminal, "differences: none") || strings.Contains(terminal, "  scenario:") {
		t.Errorf("terminal comparison names a difference that is not one, or none:\n%s", terminal)
	}
	for _, w := range []string{"What differs between the runs", "load: rate_per_s", "sqlite 3.45.1", "4 merged"} {
		if !strings.Contains(page, w) {
			t.Errorf("compare page lacks %q", w)
		}
	}
	if strings.Contains(page, "are the same") {
		t.Error("the page says the runs are the same")
	}

	// the same load with one more user is that one difference
	r = resultstest.Read(t, same)
	r.Load.Params["users"] = 16
	resultstest.Write(t, same, r)
	terminal, _, _ = compareBoth(t, root, base, same)
	if !strings.Contains(terminal, "  load: users: 8 | 16") || strings.Contains(terminal, "load model:") {
		t.Errorf("one more user:\n%s", terminal)
	}
	// clusters of one shape started apart (another name, start time,
	// socket) are no difference; another replica count is
	other := filepath.Join(root, "other")
	synth{intervals: 3, ops: []string{"read"}, perOp: 300}.write(t, other)
	for i, d := range []string{same, other} {
		r = resultstest.Read(t, d)
		r.Load.Params["users"] = 8
		r.Cluster = &results.ClusterRef{Name: fmt.Sprint("pg", i), Nodes: 2,
			Params: map[string]string{"replicas": "1", "up_seconds": fmt.Sprint(11 + i), "stats_socket": fmt.Sprint("/s", i)}}
		resultstest.Write(t, d, r)
	}
	if terminal, _, _ = compareBoth(t, root, same, other); strings.Contains(terminal, "cluster:") {
		t.Errorf("clusters of one shape:\n%s", terminal)
	}
	r.Cluster.Params["replicas"] = "2"
	resultstest.Write(t, other, r)
	if terminal, _, _ = compareBoth(t, root, same, other); !strings.Contains(terminal, "  cluster: 2 node(s) (replicas=1) | 2 node(s) (replicas=2)") {
		t.Errorf("another replica count:\n%s", terminal)
	}
	// two runs of the same thing: none, on both
	terminal, page, _ = compareBoth(t, root, base, base)
	if !strings.Contains(terminal, "differences: none (the scenario, engine, load, every tier and every setting are the same)") {
		t.Errorf("identical runs:\n%s", terminal)
	}
	if !strings.Contains(page, "In every run, the scenario, engine, load, every tier and every setting are the same.") {
		t.Error("the page of identical runs does not say they are the same")
	}
}

// compareBoth compares contender cont with baseline base on the terminal
// and on a page written under root, returning both and the page's path.
func compareBoth(t *testing.T, root, base, cont string) (terminal, page, path string) {
	t.Helper()
	var out bytes.Buffer
	if err := CompareTerminal(&out, []string{base, cont}); err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(root, "cmp.html")
	if err := WriteCompare(path, []string{base, cont}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), string(b), path
}
