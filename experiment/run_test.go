package experiment

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/cluster/clustertest"
	"github.com/scalelab/scalelab/experiment/stats"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/runner"
	"github.com/scalelab/scalelab/slo"
)

// sleepProvisioner provisions "memory" clusters whose nodes are sleep
// processes: it exercises cluster levels without a server.
func init() { cluster.Register(clustertest.SleepProvisioner{}) }

// ycsbMemory is an experiment file of ycsb on the memory engine with
// these settings and load (YAML flow mappings' contents), then rest.
func ycsbMemory(settings, load, rest string) string {
	return "scenario: ycsb\nengine: memory\nsettings: {" + settings + "}\nload: {" + load + "}\n" + rest
}

// resultsRoot is the results directory an experiment's output names.
func resultsRoot(t *testing.T, out string) string {
	t.Helper()
	root := ""
	for _, l := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(l, "results: "); ok {
			root = p
		}
	}
	if root == "" {
		t.Fatalf("no results line in:\n%s", out)
	}
	return root
}

// noClustersLeft fails the test when a cluster is still recorded.
func noClustersLeft(t *testing.T, when string) {
	t.Helper()
	if names, _ := cluster.List(); len(names) != 0 {
		t.Errorf("clusters left behind %s: %v", when, names)
	}
}

// runFile parses, validates and runs an experiment into a temp directory.
func runFile(t *testing.T, ctx context.Context, src string, o Options) (*Result, string, error) {
	t.Helper()
	s, err := Parse("t.yaml", []byte(src), "")
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if err := s.Validate(); err != nil {
		t.Fatalf("validate: %v", err)
	}
	var out, errb bytes.Buffer
	if o.Out == "" {
		o.Out = filepath.Join(t.TempDir(), "xp")
	}
	o.Stdout, o.Stderr = &out, &errb
	r, err := Run(ctx, s, o)
	t.Logf("stderr:\n%s\nstdout:\n%s", errb.String(), out.String())
	return r, out.String(), err
}

func row(t *testing.T, r *Result, combo, op, metric string) Row {
	t.Helper()
	for _, x := range r.Comparison {
		if x.Combination == combo && x.Op == op && x.Metric == metric {
			return x
		}
	}
	t.Fatalf("no row %s %s %s", combo, op, metric)
	return Row{}
}

// Injected latency is `worse` with p < 0.05; the same configuration twice
// is `no significant difference`.
func TestLatencyIsWorseAndIdenticalIsNot(t *testing.T) {
	src := ycsbMemory("ycsb.records: 200", "users: 2, duration: 300ms", `
factors:
  config:
    - {label: plain, memory.latency: 200us}
    - {label: slow, memory.latency: 2ms}
    - {label: same, memory.latency: 200us}
repeats: 4
slo: p95 < 1s
`)
	// A true null is "significant" in 5 % of tests by construction; one
	// retry makes a spurious failure of the identical-levels check a
	// 0.25 % event.
	for attempt := 1; attempt <= 2; attempt++ {
		r, out, err := runFile(t, context.Background(), src, Options{})
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		slow := row(t, r, "c02", "read", slo.P50)
		if slow.Verdict != stats.VerdictWorse || slow.PValue == nil || *slow.PValue >= 0.05 || *slow.DeltaPct < 50 {
			t.Fatalf("slow p50: %+v", slow)
		}
		if !strings.Contains(out, "worse p<0.001") && !strings.Contains(out, "worse p=0.0") {
			t.Errorf("table lacks the verdict:\n%s", out)
		}
		same := row(t, r, "c03", "read", slo.P50)
		if same.PValue == nil || same.N != 4 {
			t.Fatalf("same: %+v", same)
		}
		if same.Verdict == stats.VerdictNoDifference {
			return
		}
		t.Logf("attempt %d: identical levels gave %s (p=%.4f)", attempt, same.Verdict, *same.PValue)
	}
	t.Error("identical levels differed significantly twice in a row")
}

func TestResultsDirectory(t *testing.T) {
	t.Parallel()
	src := "name: files\n" + ycsbMemory("ycsb.records: 100", "users: 1, duration: 200ms", `
factors:
  users: [1, 2]
repeats: 2
order: grouped
slo: [p95 < 1s, "errors < 1%"]
`)
	_, out, err := runFile(t, context.Background(), src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	root := resultsRoot(t, out)
	for _, f := range []string{results.ExperimentFile, results.ComparisonCSVFile, results.ComparisonJSONFile, results.SpecFile, results.ReportFile} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	// the terminal table fits 120 columns
	for _, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > 120 && !strings.HasPrefix(l, "results: ") && !strings.HasPrefix(l, "report: ") {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}
	// the report page is written at the end and its path printed
	if page := filepath.Join(root, results.ReportFile); !strings.Contains(out, "report: "+page+"\n") {
		t.Errorf("the report's path %s is not printed:\n%s", page, out)
	} else if b, err := os.ReadFile(page); err != nil || !bytes.Contains(b, []byte("<html")) || !bytes.Contains(b, []byte("files")) {
		t.Errorf("report.html: %v, %d bytes", err, len(b))
	}
	back, err := ReadResult(root)
	if err != nil {
		t.Fatal(err)
	}
	if back.Status != results.StatusOK || back.Schema != results.ExperimentSchema || len(back.Combinations) != 2 || back.Totals.Runs != 4 || back.Baseline != "c01" {
		t.Errorf("experiment.json %+v", back)
	}
	// Grouped: c01 twice, then c02 twice.
	var order []string
	for _, c := range back.Combinations {
		for _, run := range c.Runs {
			order = append(order, run.Dir)
			doc, err := results.Read(filepath.Join(root, run.Dir))
			if err != nil || doc.Status != results.StatusOK || doc.Load.Seed != run.Seed {
				t.Errorf("run %s: %+v %v", run.Dir, doc, err)
			}
		}
	}
	if back.Combinations[0].Runs[1].Start.After(back.Combinations[1].Runs[0].Start) {
		t.Errorf("grouped order not kept: %v", order)
	}
	if c := back.Combinations[1]; c.SLOPass == nil || !*c.SLOPass || len(c.SLO) == 0 {
		t.Errorf("SLO verdict %+v", c)
	}
	b, _ := os.ReadFile(filepath.Join(root, results.ComparisonCSVFile))
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(recs) < 2 || recs[0][0] != "combination" || recs[0][len(recs[0])-1] != "verdict" {
		t.Errorf("comparison.csv: %v %q", err, recs)
	}
	if j, _ := os.ReadFile(filepath.Join(root, results.ExperimentFile)); !bytes.Contains(j, []byte(`"p95 < 1s"`)) {
		t.Error("experiment.json escapes the SLO")
	}
	// A second run into the same directory is refused.
	s, _ := Parse("t.yaml", []byte(src), "")
	if _, err := Run(context.Background(), s, Options{Out: root}); results.ExitCode(err) != results.ExitUsage {
		t.Errorf("existing directory: %v", err)
	}
}

func TestSLOFailureExits1(t *testing.T) {
	t.Parallel()
	src := ycsbMemory("ycsb.records: 100, memory.latency: 1ms", "users: 1, duration: 200ms", `
repeats: 2
slo: p50 < 100us for read
`)
	r, out, err := runFile(t, context.Background(), src, Options{})
	if results.ExitCode(err) != results.ExitCheckFailed || r.Status != results.StatusFailed || r.ExitCode != 1 {
		t.Fatalf("exit %d (%v), status %s", results.ExitCode(err), err, r.Status)
	}
	if !strings.Contains(out, "FAIL") || len(r.Failures) == 0 || !strings.Contains(r.Failures[0], "p50 of read") {
		t.Errorf("failures %q\n%s", r.Failures, out)
	}
}

func TestAdaptiveRepeats(t *testing.T) {
	t.Parallel()
	src := ycsbMemory("ycsb.records: 100, memory.latency: 1ms", "users: 2, duration: 200ms", `
factors:
  users: [1, 2]
repeats: {until_ci_within: 25%, min: 2, max: 5, metric: p50, op: read}
order: randomized
`)
	r, _, err := runFile(t, context.Background(), src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Combinations {
		if n := len(c.Runs); n < 2 || n > 5 || c.Converged == nil {
			t.Errorf("%s: %d runs, converged %v", c.ID, n, c.Converged)
		}
		if *c.Converged && (c.CIHalfPct == nil || *c.CIHalfPct > 25) {
			t.Errorf("%s: converged with CI %v", c.ID, c.CIHalfPct)
		}
		if !*c.Converged && len(c.Runs) != 5 {
			t.Errorf("%s: stopped at %d runs without converging", c.ID, len(c.Runs))
		}
	}
	if r.Repeats.UntilCIWithinPct != 25 || r.Repeats.Metric != "p50" {
		t.Errorf("rule %+v", r.Repeats)
	}
}

// Cluster levels: one cluster per level, started before its runs and
// stopped after, none left running.
func TestClusterLevels(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	src := ycsbMemory("ycsb.records: 100", "users: 1, duration: 200ms", `
clusters:
  memory: {heap: 64m}
factors:
  nodes: [1, 2]
  users: [1, 2]
repeats: 2
`)
	r, _, err := runFile(t, context.Background(), src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Clusters) != 2 || r.Clusters[0].Nodes != 1 || r.Clusters[1].Nodes != 2 {
		t.Fatalf("clusters %+v", r.Clusters)
	}
	for _, c := range r.Clusters {
		if !c.Stopped || len(c.Combinations) != 2 {
			t.Errorf("cluster %+v", c)
		}
	}
	noClustersLeft(t, "after the runs")
	if !strings.Contains(strings.Join(r.Notes, " "), "interleaved within each cluster group (2 groups)") {
		t.Errorf("notes %q", r.Notes)
	}
	for _, c := range r.Combinations {
		if c.Cluster == nil {
			t.Errorf("%s has no cluster", c.ID)
		}
	}

	// cluster_lifetime: experiment interleaves across clusters.
	r, _, err = runFile(t, context.Background(), src+"cluster_lifetime: experiment\n", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Clusters) != 2 || !r.Clusters[0].Stopped || !r.Clusters[1].Stopped {
		t.Fatalf("clusters %+v", r.Clusters)
	}
	if c1, c3 := r.Combinations[0], r.Combinations[2]; !c3.Runs[0].Start.Before(c1.Runs[1].Start) {
		t.Errorf("not interleaved across clusters: c03 r1 %v, c01 r2 %v", c3.Runs[0].Start, c1.Runs[1].Start)
	}
	noClustersLeft(t, "after the runs")
}

func TestClusterFailureAndInterrupt(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	src := ycsbMemory("ycsb.records: 100", "users: 1, duration: 200ms", `
clusters:
  memory: {nodes: 2, options: {fail: "yes"}}
repeats: 1
`)
	r, _, err := runFile(t, context.Background(), src, Options{})
	if results.ExitCode(err) != results.ExitUnfinished || r.Status != results.StatusFailed || !strings.Contains(r.Error, "injected failure") {
		t.Fatalf("failing cluster: %v %+v", err, r)
	}
	noClustersLeft(t, "after a failed start")

	// Ctrl-C during the second run: exit 3, the cluster stopped.
	src = strings.Replace(src, `, options: {fail: "yes"}`, "", 1)
	src = strings.Replace(src, "repeats: 1", "repeats: 5", 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var runs atomic.Int32
	obs := func() runner.Observer {
		if runs.Add(1) == 2 {
			cancel()
		}
		return runner.Quiet{}
	}
	r, _, err = runFile(t, ctx, src, Options{Observer: obs})
	if results.ExitCode(err) != results.ExitInterrupted || r.Status != results.StatusInterrupted {
		t.Fatalf("interrupt: %v %s", err, r.Status)
	}
	if len(r.Clusters) != 1 || !r.Clusters[0].Stopped {
		t.Errorf("cluster after interrupt %+v", r.Clusters)
	}
	noClustersLeft(t, "after an interrupt")
}

func TestBracket(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		sr         Search
		limit      float64 // loads <= limit pass
		lo, hi     float64
		firstSteps []float64
	}{
		{"users up", Search{On: "users", Start: 8, Max: 1024, Precision: 0.1}, 37, 36, 38, []float64{8, 16, 32, 64, 48, 40, 36, 38}},
		{"users exact", Search{On: "users", Start: 8, Max: 1024, Precision: 0.01}, 37, 37, 38, []float64{8, 16, 32, 64, 48, 40, 36, 38, 37}},
		{"users down", Search{On: "users", Start: 64, Max: 1024, Precision: 0.1}, 5, 5, 6, []float64{64, 32, 16, 8, 4, 6, 5}},
		{"never breaks", Search{On: "users", Start: 8, Max: 100, Precision: 0.1}, 1e9, 100, 0, []float64{8, 16, 32, 64, 100}},
		{"always breaks", Search{On: "users", Start: 4, Max: 100, Precision: 0.1}, 0, 0, 1, []float64{4, 2, 1}},
		{"rate", Search{On: "rate", Start: 100, Max: 1e6, Precision: 0.05}, 1234, 1200, 1250, []float64{100, 200, 400, 800, 1600, 1200, 1400, 1300, 1250}},
	} {
		var steps []float64
		lo, hi, err := bracket(tc.sr, func(l float64) (stepVerdict, error) {
			steps = append(steps, l)
			if l <= tc.limit {
				return stepMeets, nil
			}
			return stepBreaks, nil
		})
		if err != nil || lo != tc.lo || hi != tc.hi {
			t.Errorf("%s: bracket (%v, %v) %v, want (%v, %v); steps %v", tc.name, lo, hi, err, tc.lo, tc.hi, steps)
		}
		if fmt.Sprint(steps) != fmt.Sprint(tc.firstSteps) {
			t.Errorf("%s: steps %v, want %v", tc.name, steps, tc.firstSteps)
		}
	}
}

func TestKneeSearchRuns(t *testing.T) {
	t.Parallel()
	// memory.latency 2ms caps each user near 500 ops/s: the objective
	// "throughput below 1500/s" holds for 1 and 2 users and breaks by 8 on
	// a quiet machine; a starved one (sleeps overshooting) may need more
	// users to break it, hence max 64.
	src := ycsbMemory("ycsb.records: 100, memory.latency: 2ms", "users: 1, duration: 300ms", `
slo: throughput < 1500/s
search: {on: users, start: 1, max: 64, repeats: 2, precision: 50%}
`)
	r, out, err := runFile(t, context.Background(), src, Options{})
	if err != nil {
		t.Fatalf("knee: %v", err)
	}
	if r.Kind != results.KindKnee || len(r.Knees) != 1 {
		t.Fatalf("result %+v", r)
	}
	k := r.Knees[0]
	if k.Load == nil || k.Broke == nil || *k.Load >= *k.Broke || *k.Load < 2 || *k.Broke > 64 {
		t.Fatalf("knee %+v", k)
	}
	if k.Throughput == nil || k.Throughput.N != 2 || k.Throughput.CILow == nil || len(k.Figures) != 1 {
		t.Errorf("knee figures %+v", k)
	}
	for i, st := range k.Steps {
		if len(st.Runs) != 2 || (i > 0 && st.Load <= k.Steps[i-1].Load) {
			t.Errorf("step %+v", st)
		}
		if st.Pass != (st.Load <= *k.Load) {
			t.Errorf("step %v pass=%v but knee at %v", st.Load, st.Pass, *k.Load)
		}
	}
	// the knee names which tier saturated at the first load that broke the SLO
	if want := fmt.Sprintf("at %g users: ", *k.Broke); !strings.HasPrefix(k.Saturation, want) || len(k.Saturation) <= len(want) || !strings.Contains(k.Summary, k.Saturation) {
		t.Errorf("knee saturation %q, summary %q", k.Saturation, k.Summary)
	}
	if !strings.Contains(out, "knee: ") || !strings.Contains(out, "break it") {
		t.Errorf("table:\n%s", out)
	}
	root := resultsRoot(t, out)
	if b, err := os.ReadFile(filepath.Join(root, results.KneeCSVFile)); err != nil || !bytes.HasPrefix(b, []byte("combination,label,on,load,pass")) {
		t.Errorf("knee.csv: %v %q", err, b)
	}
}

func TestCheckDir(t *testing.T) {
	t.Parallel()
	src := ycsbMemory("ycsb.records: 100, memory.latency: 1ms", "users: 1, duration: 200ms", `
factors:
  users: [1, 2]
repeats: 2
slo: p50 < 1s
`)
	r, out, err := runFile(t, context.Background(), src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	root := resultsRoot(t, out)
	g, err := CheckDir(root, nil)
	if err != nil || !g.Pass || len(g.Items) != 2 || g.Kind != results.KindMatrix {
		t.Fatalf("experiment gate %+v %v", g, err)
	}
	g, _ = CheckDir(root, []string{"p50 < 100us for read"})
	if g.Pass {
		t.Errorf("a stricter SLO passed: %+v", g)
	}
	runDir := filepath.Join(root, r.Combinations[0].Runs[0].Dir)
	if g, err := CheckDir(runDir, []string{"p50<1s", "errors<1%"}); err != nil || !g.Pass || len(g.Items[0].Outcomes) != 3 {
		t.Errorf("run gate %+v %v", g, err)
	}
	if g, _ := CheckDir(runDir, []string{"p50 < 1us"}); g.Pass {
		t.Error("run gate passed an impossible SLO")
	}
	if _, err := CheckDir(t.TempDir(), nil); err == nil {
		t.Error("an empty directory is not results")
	}
}
