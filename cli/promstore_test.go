package cli

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cluster/cgroup"
	"github.com/scalelab/scalelab/promsource/promtest"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/runner"
)

// TestStoreSaturatedFromPrometheus: a PostgreSQL confined to 0.2 cores (a
// cgroup) is given to the run by --target, so scalelab samples nothing
// of it; a real Prometheus scrapes node_exporter (the whole machine),
// postgres_exporter (the server's own figures) and process-exporter (the
// postmaster and every backend it forked, as one group). From
// Prometheus' figures alone, mapped by a YAML file, the verdict names the
// store as saturated, and the exporter's figures are the store's engine
// stats.
func TestStoreSaturatedFromPrometheus(t *testing.T) {
	skipShort(t, "starts PostgreSQL and Prometheus")
	needPostgres(t)
	needCgroupLimits(t)
	t.Setenv("SCALELAB_HOME", t.TempDir())
	st, _ := upLoadedCluster(t, "postgres", "pgprom", "--cpus", "0.2", "--memory", "512m")
	node := st.Nodes[0]
	// the machine is shared: the store's group comes first, so that its
	// quota, not the other work, is its limit
	promtest.Prioritise(t, node.Cgroup, 16384)
	promtest.Renice(t, os.Getpid(), -10) // the generator keeps it busy
	pw, err := st.Password()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGPASSWORD", pw)
	dsn, err := url.Parse(st.Target)
	if err != nil {
		t.Fatal(err)
	}
	dsn.User = url.UserPassword(dsn.User.Username(), pw)
	q := dsn.Query()
	q.Set("sslmode", "disable")
	dsn.RawQuery = q.Encode()

	nodeExp := promtest.NodeExporter(t)
	pgExp := promtest.PostgresExporter(t, dsn.String())
	procExp := promtest.ProcessExporter(t, map[string]string{"pgstore": regexp.QuoteMeta(node.DataDir)})
	prom := promtest.Prometheus(t, map[string][]string{"node": {nodeExp}, "postgres": {pgExp}, "process": {procExp}})
	prom.WaitUp(t, "process", 1)
	prom.WaitUp(t, "postgres", 1)
	mapping := filepath.Join(t.TempDir(), "observe.yaml")
	if err := os.WriteFile(mapping, []byte(`prometheus: `+prom.URL+`
tiers:
  store:
    cpu: 'namedprocess_namegroup_cpu_seconds_total{job="process",groupname="pgstore"}'
    exporter: '{job="postgres"}'
    cpus: 0.2
`), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := cgroup.Open(node.Cgroup)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := g.Usage()
	began := time.Now()
	dir := filepath.Join(t.TempDir(), "run")
	doc, out, err := runOpts(t, &runner.Options{Scenario: "ycsb", Engine: "postgres", Target: st.Target, Users: 16, Duration: 12 * time.Second,
		Sets: []string{"ycsb.records=2000"}, Out: dir, Observe: []string{mapping}})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	after, _ := g.Usage()
	t.Logf("the store's cgroup: %.3f cores over the run with its load (%d of %d periods throttled)", float64(after.CPUNanos-before.CPUNanos)/1e9/time.Since(began).Seconds(),
		after.ThrottledPeriods-before.ThrottledPeriods, after.Periods-before.Periods)
	tel := doc.Telemetry
	var store *results.NodeUsage
	for i, n := range tel.Nodes {
		if n.Tier == "store" {
			store = &tel.Nodes[i]
		}
		if n.Tier == "store" && n.Source != "prometheus" {
			t.Errorf("a store node not from Prometheus: %+v", n)
		}
	}
	if store == nil {
		t.Fatalf("no store node in %+v\nwarnings %v", tel.Nodes, doc.Warnings)
	}
	t.Logf("store through Prometheus: %s mean %.3f cores, max %.3f, at its limit in %.0f%% of the samples; %s", store.Node, store.CPUMeanCores, store.CPUMaxCores, 100*store.AtLimitShare, tel.Saturation)
	if store.Node != procExp+"/pgstore" || store.Limits == nil || store.Limits.CPUs != 0.2 || store.CPUMaxCores > 0.3 || store.PeakRSSBytes <= 0 {
		t.Errorf("store node %+v", store)
	}
	if csv, err := os.ReadFile(filepath.Join(dir, results.TelemetryFile)); err == nil {
		for _, line := range strings.Split(string(csv), "\n") {
			if strings.Contains(line, ",store,") {
				t.Logf("telemetry.csv: %s", line)
			}
		}
	}
	want := "store " + procExp + "/pgstore saturated: at its CPU limit of 0.2 cores"
	if tel.Saturated == nil || tel.Saturated.Tier != "store" || !strings.HasPrefix(tel.Saturation, want) || !strings.Contains(tel.Saturation, "from prometheus's figures") {
		t.Errorf("verdict %q, want %q", tel.Saturation, want)
	}
	if len(tel.Unobserved) != 0 {
		t.Errorf("unobserved %+v", tel.Unobserved)
	}
	var commits *results.EngineStat
	for i, e := range tel.EngineStats {
		if e.Tier == "store" && e.Name == "prom.pg_stat_database_xact_commit" {
			commits = &tel.EngineStats[i]
		}
	}
	if commits == nil || commits.Last <= commits.First {
		t.Errorf("postgres_exporter's commits not among the engine stats: %+v", tel.EngineStats)
	}
	csv, err := os.ReadFile(filepath.Join(dir, results.EngineStatsFile))
	if err != nil || !strings.Contains(string(csv), ",store,prom.pg_stat_database_xact_commit,") {
		t.Errorf("engine_stats.csv without the exporter's figures (%v)", err)
	}
	page, err := os.ReadFile(filepath.Join(dir, results.ReportFile))
	if err != nil || !strings.Contains(string(page), "pgstore") {
		t.Errorf("report without the store's node (%v)", err)
	}
}
