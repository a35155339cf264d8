package search_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cli"
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/engine/search/searchtest"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/setting"
)

// TestMain keeps the clusters the CLI starts in a directory of their own.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "scalelab-search-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(70)
	}
	os.Setenv("SCALELAB_HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// scalelab runs the command line in-process and fails t on a non-zero exit.
func scalelab(t *testing.T, args ...string) string {
	t.Helper()
	var out, errs bytes.Buffer
	if code := cli.Main(context.Background(), args, &out, &errs); code != 0 {
		t.Fatalf("scalelab %s: exit %d\n%s\n%s", strings.Join(args, " "), code, out.String(), errs.String())
	}
	return out.String()
}

// TestCluster is the end-to-end test of each distribution: `scalelab
// cluster up` starts a real 2-node cluster (one JVM per node), status lists
// both nodes, the index settings reach the server, `scalelab run logs`
// with replicas=1 gets every count right and measures freshness (one poll
// with refresh=true), and `scalelab cluster down` leaves no JVM and no
// listening port.
func TestCluster(t *testing.T) {
	t.Parallel()
	for _, name := range []string{search.OpenSearch, search.Elasticsearch} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			searchtest.Require(t, name)
			cl := "t" + name[:2] + strconv.Itoa(os.Getpid())
			start := time.Now()
			out := scalelab(t, "cluster", "up", name, "--name", cl, "--nodes", "2", "--heap", searchtest.Heap,
				"--opt", "exit_with_pid="+strconv.Itoa(os.Getpid()), "--opt", "jvm_options="+searchtest.JVMOptions)
			t.Logf("cluster up (2 nodes) took %.1fs:\n%s", time.Since(start).Seconds(), out)
			st, err := cluster.Load(cl)
			if err != nil {
				t.Fatal(err)
			}
			downed := false
			t.Cleanup(func() {
				if !downed {
					_ = searchtest.Stop(st)
				}
			})

			checkStatus(t, cl)
			checkSettings(t, name, st)
			checkLogsRun(t, name, cl)

			scalelab(t, "cluster", "down", cl)
			downed = true
			if err := searchtest.Gone(st); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(st.Dir); !os.IsNotExist(err) {
				t.Errorf("cluster directory %s left behind: %v", st.Dir, err)
			}
		})
	}
}

func checkStatus(t *testing.T, cl string) {
	t.Helper()
	var status []struct {
		Auth  string `json:"auth"`
		Nodes []cluster.NodeStatus
	}
	if err := json.Unmarshal([]byte(scalelab(t, "cluster", "status", cl, "--json")), &status); err != nil || len(status) != 1 {
		t.Fatalf("status: %v %v", status, err)
	}
	elected := 0
	for _, n := range status[0].Nodes {
		if !n.Alive || n.PID <= 0 || n.Port <= 0 || n.Ports["transport"] <= 0 || n.Detail["cluster"] != "green" ||
			!strings.Contains(n.Detail["server_roles"], "m") || n.Role != "cm+data+ingest" {
			t.Errorf("node status %+v", n)
		}
		if n.Detail["elected_cm"] == "yes" {
			elected++
		}
	}
	if len(status[0].Nodes) != 2 || elected != 1 || !strings.HasPrefix(status[0].Auth, "none") {
		t.Errorf("status: %d nodes, %d elected cluster managers, auth %q", len(status[0].Nodes), elected, status[0].Auth)
	}
}

// open connects to the cluster with engine settings.
func open(t *testing.T, name string, st *cluster.State, assignments ...string) *search.Conn {
	t.Helper()
	e, _ := engine.Lookup(name)
	set := setting.NewSet(e.Settings()...)
	for _, a := range assignments {
		if err := set.Apply(name + "." + a); err != nil {
			t.Fatal(err)
		}
	}
	c, err := e.Open(context.Background(), engine.Config{Settings: set, Cluster: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*search.Conn)
}

// checkSettings reads the index settings back from the server, shows that
// routed documents land on the routing value's shard, and that the refresh
// setting decides when writes become searchable.
func checkSettings(t *testing.T, name string, st *cluster.State) {
	t.Helper()
	ctx := context.Background()
	c := open(t, name, st, "shards=3", "replicas=1", "refresh=interval:30s", "routing=user", "index_prefix=set-")
	if len(c.Nodes()) != 2 {
		t.Errorf("client nodes %v, want both", c.Nodes())
	}
	index := c.IndexName("activity", "")
	if err := c.CreateIndex(ctx, index, nil, nil); err != nil {
		t.Fatal(err)
	}
	// the server's own task list is understood: no write runs now
	if n, listed, err := c.WritesRunning(ctx, index); err != nil || !listed || n != 0 {
		t.Errorf("writes running on an idle index: %d, listed %v, %v", n, listed, err)
	}
	got, err := c.GetSettings(ctx, index)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"index.number_of_shards": "3", "index.number_of_replicas": "1", "index.refresh_interval": "30s"} {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	// Every document of user alice goes to one shard, the one the server
	// names for routing value alice; bob's documents spread nowhere else.
	for i := range 12 {
		for _, user := range []string{"alice", "bob"} {
			if err := c.IndexDoc(ctx, index, fmt.Sprintf("%s-%d", user, i), c.RoutingFor(user), []byte(`{"user":"`+user+`"}`)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n, err := c.Count(ctx, index, nil, ""); err != nil || n != 0 {
		t.Errorf("before a refresh (interval 30s) %d documents searchable (%v), want 0", n, err)
	}
	if err := c.Refresh(ctx, index); err != nil {
		t.Fatal(err)
	}
	shards, err := c.DocsPerShard(ctx, index)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]int64{}
	for _, user := range []string{"alice", "bob"} {
		s, err := c.ShardOf(ctx, index, "", user)
		if err != nil {
			t.Fatal(err)
		}
		want[s] += 12
	}
	for s := range 3 {
		if shards[s] != want[s] {
			t.Errorf("shard %d holds %d documents, want %d (per shard %v)", s, shards[s], want[s], shards)
		}
	}
	if n, err := c.Count(ctx, index, []byte(`{"term":{"user.keyword":"alice"}}`), c.RoutingFor("alice")); err != nil || n != 12 {
		t.Errorf("alice's documents on her shard: %d, %v", n, err)
	}

	// refresh=true: a write is searchable when acknowledged; none: the
	// index never refreshes by itself.
	ct := open(t, name, st, "refresh=true", "index_prefix=set-")
	if err := ct.CreateIndex(ctx, ct.IndexName("now", ""), nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := ct.IndexDoc(ctx, ct.IndexName("now", ""), "1", "", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if n, err := ct.Count(ctx, ct.IndexName("now", ""), nil, ""); err != nil || n != 1 {
		t.Errorf("refresh=true: %d documents searchable after the write (%v), want 1", n, err)
	}
	cn := open(t, name, st, "refresh=none", "index_prefix=set-", "replicas=0")
	if err := cn.CreateIndex(ctx, cn.IndexName("never", ""), nil, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := cn.GetSettings(ctx, cn.IndexName("never", "")); err != nil || got["index.refresh_interval"] != "-1" || got["index.number_of_replicas"] != "0" {
		t.Errorf("refresh=none, replicas=0: settings %v, %v", got, err)
	}
	// force_merge: after the load, one segment per shard.
	cm := open(t, name, st, "force_merge=true", "index_prefix=set-", "replicas=0", "refresh=none")
	merged := cm.IndexName("merged", "")
	if err := cm.CreateIndex(ctx, merged, nil, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // three refreshes, three segments
		if err := cm.IndexDoc(ctx, merged, strconv.Itoa(i), "", []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		if err := cm.Refresh(ctx, merged); err != nil {
			t.Fatal(err)
		}
	}
	segments := func() int {
		var segs []map[string]string
		status, body, err := cm.Do(ctx, "GET", "/_cat/segments/"+merged, "format=json", nil)
		if err != nil || status != 200 || json.Unmarshal(body, &segs) != nil {
			t.Fatalf("segments: %d %s %v", status, body, err)
		}
		return len(segs)
	}
	if n := segments(); n != 3 {
		t.Logf("before the merge: %d segments", n)
	}
	if err := cm.AfterLoad(ctx, merged); err != nil {
		t.Fatal(err)
	}
	if n := segments(); n != 1 {
		t.Errorf("force_merge=true: %d segments after the load, want 1", n)
	}
	if err := c.DeleteIndex(ctx, "set-*"); err != nil {
		t.Fatal(err)
	}
}

// runLogs runs the logs scenario on the cluster with replicas=1 and
// returns run.json and the results directory, failing t unless the run
// succeeded.
func runLogs(t *testing.T, name, cl string, args ...string) (*results.Run, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	args = append([]string{"run", "logs", "--engine", name, "--cluster", cl, "--progress", "off", "--out", dir,
		"--set", name + ".replicas=1"}, args...)
	scalelab(t, args...)
	b, err := os.ReadFile(filepath.Join(dir, results.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc results.Run
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Status != results.StatusOK || doc.ExitCode != 0 || len(doc.Failures) > 0 {
		t.Fatalf("%v: status %s, exit %d, failures %v", args, doc.Status, doc.ExitCode, doc.Failures)
	}
	x := doc.Server.Extra
	if x["distribution"] != name || x["nodes"] != "2" || x["index.replicas"] != "1" || x["client_nodes"] != "2" {
		t.Errorf("run.json server %+v", doc.Server)
	}
	return &doc, dir
}

// checkLogsRun runs the logs scenario's queries (every count checked
// against the ground truth by the scenario), then freshness probes with
// the default refresh and with refresh=true.
func checkLogsRun(t *testing.T, name, cl string) {
	t.Helper()
	// An operation budget, not a duration: on a loaded machine every kind
	// of operation still runs (each has a weight of at least 5%).
	doc, dir := runLogs(t, name, cl, "--users", "4", "--ops", "300", "--telemetry", "200ms", "--set", "logs.records=5000", "--set", "logs.batch_size=100",
		"--set", "logs.mix=write:20,write_bulk:5,read:20,count_a:10,count_b:10,count_c:10,errors_per_host:5,search:5")
	for _, op := range []string{"logs.write", "logs.write_bulk", "logs.read", "logs.count_a", "logs.count_b", "logs.count_c", "logs.search", "logs.errors_per_host"} {
		s := doc.Summary[op]
		if s.Count == 0 || s.Errors > 0 {
			t.Errorf("%s: %d ok, %d errors %v", op, s.Count, s.Errors, s.ErrorsByClass)
		}
	}
	t.Logf("%s, 2 nodes, replicas=1: write %.0f/s, read %.0f/s, count_a %.0f/s (4 users, 300 operations)", name,
		doc.Summary["logs.write"].ThroughputPerS, doc.Summary["logs.read"].ThroughputPerS, doc.Summary["logs.count_a"].ThroughputPerS)
	checkTelemetry(t, name, dir, doc)

	for _, refresh := range []string{"interval:1s", "true"} {
		// Three probes, one after the other: --ops ends the run between
		// probes, never in the middle of one.
		doc, _ := runLogs(t, name, cl, "--users", "1", "--ops", "6", "--set", "logs.records=2000", "--set", "logs.mix=freshness:1",
			"--set", "logs.freshness_records=300", "--set", name+".refresh="+refresh)
		if doc.Server.Extra["index.refresh"] != refresh {
			t.Errorf("run.json refresh %q", doc.Server.Extra["index.refresh"])
		}
		f, _ := doc.ScenarioReport["freshness"].(map[string]any)
		if f == nil || f["failed_probes"] != float64(0) || f["probes"] != float64(3) {
			t.Fatalf("refresh=%s: freshness %v", refresh, f)
		}
		polls, delay := f["polls"].(map[string]any), f["delay_ms"].(map[string]any)
		t.Logf("%s refresh=%s: freshness delay mean %.0f ms (min %.0f, max %.0f), polls mean %v, max %v", name, refresh,
			delay["mean"], delay["min"], delay["max"], polls["mean"], polls["max"])
		if refresh == "true" && polls["max"] != float64(1) {
			t.Errorf("refresh=true: a probe took %v polls, want 1", polls["max"])
		}
	}
}
