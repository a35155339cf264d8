package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
	"github.com/scalelab/scalelab/scenario/records"
	"github.com/scalelab/scalelab/setting"
)

// TestAppTierBehindHAProxy: a PostgreSQL primary and replica, two records
// app servers behind HAProxy (`cluster up app`), a phases run of records
// through the balancer with app2 killed mid-run: the balancer marks it
// down and sends the rest to app1, run.json and the report show the app
// tier with the requests per server, HTTP statuses are counted, nothing
// acknowledged is lost, and `cluster down` stops every process.
func TestAppTierBehindHAProxy(t *testing.T) {
	skipShort(t, "starts PostgreSQL, app servers and HAProxy")
	needPostgres(t)
	needHAProxy(t)
	t.Setenv("SCALELAB_HOME", t.TempDir())
	ctx := context.Background()
	upCluster(t, "postgres", "pgapp", "--replicas", "1")
	st, out := upLoadedCluster(t, "app", "web", "--scenario", "records", "--servers", "2", "--cluster", "pgapp",
		"--set", "records.bcrypt_cost=4", "--opt", "check_interval=500ms", "--opt", "max_queue=256")
	// the store cannot go while the app cluster uses it
	if code, out, errs := run(t, ctx, "cluster", "down", "pgapp"); code != ExitUsage || !strings.Contains(errs, "app cluster web (its store)") ||
		!strings.Contains(errs, "--force") || strings.Contains(out, "stopped") {
		t.Errorf("cluster down of the store under an app cluster: %d %s %s", code, out, errs)
	}
	if !strings.Contains(out, "2 servers of records behind HAProxy") || !strings.Contains(out, "store: cluster pgapp (postgres)") {
		t.Errorf("cluster up app says:\n%s", out)
	}
	_, status, _ := run(t, ctx, "cluster", "status", "web")
	if strings.Count(status, "balancer=UP") != 2 || !strings.Contains(status, "lb") {
		t.Errorf("status before the run:\n%s", status)
	}

	dir, out, r := runAppRecords(t, ctx, "web", "3s@2/s,3s@4/s,3s@8/s", "kill:app2@4s")
	at := appTierOf(r)
	if at == nil || len(at.Servers) != 2 {
		t.Fatalf("app tier in run.json: %+v", r.Tiers)
	}
	app1, app2 := at.Servers[0], at.Servers[1]
	for _, tr := range r.Tiers {
		if tr.App != nil && tr.Settings["max_queue"] != "256" {
			t.Errorf("the app tier's settings %v: no max_queue=256", tr.Settings)
		}
	}
	// each phase judged on its own, from its own samples (1 a second)
	if tel := r.Telemetry; tel == nil || len(tel.Phases) != 3 {
		t.Errorf("telemetry by phase: %+v", r.Telemetry)
	} else {
		for i, ph := range tel.Phases {
			if ph.FromS != float64(3*i) || ph.ToS != float64(3*i+3) || ph.Samples < 1 || ph.Samples > 4 || ph.Saturation == "" || strings.HasPrefix(ph.Saturation, "not judged") {
				t.Errorf("phase %d: %+v", i+1, ph)
			}
		}
	}
	// app1 stays up; on a busy machine it may have missed one check
	// ("UP 1/2"), never two
	if app1.Requests == 0 || app2.Requests == 0 || app1.Requests <= app2.Requests || !strings.HasPrefix(app1.StatusEnd, "UP") {
		t.Errorf("requests per server: app1 %+v, app2 %+v", app1, app2)
	}
	if app2.Downs != 1 || !strings.HasPrefix(app2.StatusEnd, "DOWN") {
		t.Errorf("the balancer did not mark the killed app2 down: %+v", app2)
	}
	if at.Requests < app1.Requests+app2.Requests || r.Engine != "postgres" || r.Cluster == nil || r.Cluster.Name != "pgapp" {
		t.Errorf("frontend %d requests, servers %d + %d; engine %s, cluster %+v", at.Requests, app1.Requests, app2.Requests, r.Engine, r.Cluster)
	}
	http, _ := r.ScenarioReport["http"].(map[string]any)
	by, _ := http["by_operation"].(map[string]any)
	signup, _ := by["signup"].(map[string]any)
	if len(signup) == 0 {
		t.Errorf("no HTTP statuses counted for signup: %v", by)
	}
	var marked bool
	for _, e := range r.Events {
		marked = marked || strings.Contains(e.Detail, "app2 DOWN")
	}
	if !marked || len(r.Faults) != 1 || r.Faults[0].Outcome != "done" {
		t.Errorf("faults %+v, events %+v", r.Faults, r.Events)
	}
	if a := r.Audit; a == nil || a.Registers == nil || !a.Registers.Checked || a.Registers.Lost != 0 || a.Registers.Resurrected != 0 || a.Registers.Acknowledged == 0 {
		t.Errorf("audit %+v", a)
	}
	tiers := map[string]bool{}
	if r.Telemetry != nil {
		for _, tu := range r.Telemetry.Tiers {
			tiers[tu.Tier] = true
		}
	}
	if !tiers["app"] || !tiers["balancer"] || !tiers["store"] {
		t.Errorf("telemetry tiers %v", tiers)
	}
	html, err := os.ReadFile(filepath.Join(dir, results.ReportFile))
	if err != nil || !strings.Contains(string(html), "App tier: requests per server") {
		t.Errorf("report.html lacks the app tier table (%v)", err)
	}
	if !strings.Contains(out, "app tier: ") || !strings.Contains(out, "app2 ") {
		t.Errorf("the summary does not show the app tier:\n%s", out)
	}

	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"run", "mhealth", "--cluster", "web"}, "an app cluster serving records, not mhealth"},
		{[]string{"run", "records", "--cluster", "web", "--engine", "sqlite"}, "its servers use engine postgres"},
		{[]string{"run", "records", "--cluster", "web", "--set", "records.app=http://x"}, "sets it to its balancer"},
		{[]string{"cluster", "up", "app", "--name", "w2", "--scenario", "ycsb"}, "not a web application"},
		{[]string{"cluster", "up", "app", "--name", "w2"}, "--scenario is required"},
		{[]string{"cluster", "up", "app", "--name", "w2", "--scenario", "records", "--set", "records.eager=maybe"}, "records.eager"},
		{[]string{"cluster", "up", "app", "--name", "w2", "--scenario", "records", "--cluster", "web"}, "is an app cluster"},
		{[]string{"cluster", "up", "app", "--name", "w2", "--scenario", "records", "--opt", "balance=random"}, "allowed: roundrobin|leastconn"},
		{[]string{"cluster", "up", "postgres", "--name", "w2", "--servers", "2"}, "are for `cluster up app`"},
	} {
		if code, _, errs := run(t, ctx, c.args...); code != ExitUsage || !strings.Contains(errs, c.says) {
			t.Errorf("%v: exit %d, %s (want %q)", c.args, code, errs, c.says)
		}
	}

	if code, _, errs := run(t, ctx, "cluster", "down", "web"); code != 0 {
		t.Fatalf("cluster down: %s", errs)
	}
	for _, n := range st.Nodes {
		if cluster.Alive(n.PID) {
			t.Errorf("%s (pid %d) still runs after cluster down", n.Name, n.PID)
		}
	}
}

// TestAppTierExperiment: an experiment with an app tier varies the number
// of app servers (app.servers) and a scenario setting that the servers
// must get (records.eager): each combination runs against its own app
// cluster of that many servers with that setting, on a SQLite file, and
// every cluster is stopped at the end; bad app fields are refused with
// their place in the file.
func TestAppTierExperiment(t *testing.T) {
	skipShort(t, "starts app servers and HAProxy")
	needHAProxy(t)
	t.Setenv("SCALELAB_HOME", t.TempDir())
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "xp.yaml")
	src := `scenario: records
settings: {records.providers: 200, records.patients: 100, records.bcrypt_cost: 4, records.think_page: 50ms, records.think_form: 100ms}
load: {phases: 2s@2/s}
app: {max_inflight: 8, check_interval: 500ms}
combinations: [{app.servers: 1}, {app.servers: 2, records.eager: true}]
factors:
  app.servers: [1, 2]
  records.eager: [false, true]
repeats: 1
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	xp := filepath.Join(dir, "out")
	code, out, errs := run(t, ctx, "experiment", "run", file, "--out", xp)
	t.Logf("experiment: exit %d\n%s\n%s", code, out, errs)
	if code != 0 {
		t.Fatalf("experiment run: exit %d", code)
	}
	if !strings.Contains(errs, "1 servers of records on a SQLite file behind HAProxy") || !strings.Contains(errs, "2 servers of records on a SQLite file behind HAProxy, records.bcrypt_cost=4 records.eager=true") {
		t.Errorf("the experiment did not say which app clusters it started:\n%s", errs)
	}
	for i, want := range []struct {
		servers int
		eager   string
	}{{1, "false"}, {2, "true"}} {
		r := resultstest.Read(t, filepath.Join(xp, "runs", fmt.Sprintf("c%02d-r01", i+1)))
		var at *results.AppTier
		var settings map[string]string
		for _, tier := range r.Tiers {
			if tier.Role == "app" {
				at, settings = tier.App, tier.Settings
			}
		}
		if at == nil || len(at.Servers) != want.servers || at.Requests == 0 || r.Engine != "sqlite" {
			t.Errorf("c%02d: app tier %+v", i+1, at)
			continue
		}
		if got := strings.Contains(settings["settings"], "records.eager=true"); got != (want.eager == "true") {
			t.Errorf("c%02d: the servers' settings %q, want records.eager=%s", i+1, settings["settings"], want.eager)
		}
	}
	names, err := cluster.List()
	if err != nil || len(names) != 0 {
		t.Errorf("clusters left after the experiment: %v %v", names, err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("scenario: ycsb\napp: {servers: 40, balance: random}\nfactors:\n  app.procs: [-1]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = run(t, ctx, "experiment", "validate", bad)
	for _, want := range []string{"bad.yaml:2:16: app.servers: \"40\": allowed: an integer in [1, 16]", "app.balance: \"random\": allowed: roundrobin, leastconn", "factors.app.procs", "allowed: an integer, 0 or more"} {
		if code != ExitUsage || !strings.Contains(errs, want) {
			t.Errorf("bad app fields: exit %d, %s (want %q)", code, errs, want)
		}
	}
}

// TestAppTierMhealth: an app cluster of mhealth, a scenario without
// sessions, on its own SQLite file: its servers are given the cluster's
// session secret (--secret-file), take none, and serve a run through the
// balancer, whose acknowledged posts are read back from the store; a
// records server takes the secret as its setting, and
// --secret-file with --set records.secret_file is refused.
func TestAppTierMhealth(t *testing.T) {
	skipShort(t, "starts app servers and HAProxy")
	needHAProxy(t)
	t.Setenv("SCALELAB_HOME", t.TempDir())
	ctx := context.Background()
	st, _ := upLoadedCluster(t, "app", "mh", "--scenario", "mhealth", "--servers", "2", "--opt", "check_interval=500ms")
	for _, n := range st.Nodes {
		if n.Role == "server" && !strings.Contains(strings.Join(n.Cmd, " "), "--secret-file "+st.SecretFile) {
			t.Errorf("%s's command %q lacks --secret-file %s", n.Name, n.Cmd, st.SecretFile)
		}
	}
	dir := filepath.Join(t.TempDir(), "r")
	code, out, errs := run(t, ctx, "run", "mhealth", "--cluster", "mh", "--users", "4", "--duration", "2s", "--out", dir, "--progress", "off")
	if code != 0 {
		t.Fatalf("run mhealth through the app cluster: %d\n%s\n%s", code, out, errs)
	}
	r := resultstest.Read(t, dir)
	at := appTierOf(r)
	if at == nil || len(at.Servers) != 2 || at.Servers[0].Requests == 0 || at.Servers[1].Requests == 0 {
		t.Errorf("app tier in run.json: %+v", at)
	}
	// the writes the servers acknowledged are read back from their store
	if a := r.Audit; a == nil || a.Acknowledged == 0 || a.ReadBack != a.Attempted || a.Lost != 0 || a.NotChecked != "" {
		t.Errorf("audit of the posts through the app: %+v", a)
	}

	set := setting.NewSet((&records.Scenario{}).Settings()...)
	if err := applySecretFile(set, records.Name, "/s"); err != nil || set.Get(records.KeySecretFile).String() != "/s" {
		t.Errorf("records: %v, %s=%q", err, records.KeySecretFile, set.Get(records.KeySecretFile).String())
	}
	if err := applySecretFile(set, records.Name, "/t"); err == nil || !strings.Contains(err.Error(), "give one") {
		t.Errorf("--secret-file with the setting given too: %v", err)
	}
}

// runAppRecords runs records with a small seed and short think times
// against the app cluster, with the phases and the fault given, and
// returns the results directory, what the run printed and its run.json.
func runAppRecords(t *testing.T, ctx context.Context, app, phases, fault string) (string, string, *results.Run) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "r")
	code, out, errs := run(t, ctx, "run", "records", "--cluster", app, "--phases", phases, "--fault", fault,
		"--set", "records.providers=300", "--set", "records.patients=150", "--set", "records.think_page=100ms", "--set", "records.think_form=200ms",
		"--out", dir, "--progress", "off")
	t.Logf("run: exit %d\n%s", code, out)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errs)
	}
	return dir, out, resultstest.Read(t, dir)
}

// appTierOf is the app tier in run.json, nil without one.
func appTierOf(r *results.Run) *results.AppTier {
	for _, tier := range r.Tiers {
		if tier.Role == "app" {
			return tier.App
		}
	}
	return nil
}
