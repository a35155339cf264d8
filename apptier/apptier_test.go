package apptier

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/internal/testenv"
)

// TestParseStats reads a `show stat` of HAProxy 2.6 taken after app2 was
// killed during a run: its connection attempts were redispatched to app1,
// the balancer marked it down once, and the frontend's responses are the
// servers' together.
func TestParseStats(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "show-stat.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := parseStats(f)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]ServerStats{}
	for _, r := range rows {
		by[r.Proxy+"/"+r.Name] = r
	}
	app1, app2, fe := by["app/app1"], by["app/app2"], by["web/FRONTEND"]
	if app1.Requests != 146 || !app1.Up() || app1.Responses["2xx"] != 104 || app1.Downs != 0 {
		t.Errorf("app1 %+v", app1)
	}
	if app2.Requests != 9 || app2.Up() || app2.Status != "DOWN" || app2.Downs != 1 || app2.Redispatches != 13 || app2.DowntimeS != 29 {
		t.Errorf("app2 %+v", app2)
	}
	if fe.Requests != app1.Requests+app2.Requests || fe.Status != "OPEN" {
		t.Errorf("frontend %+v", fe)
	}
	if _, err := parseStats(strings.NewReader("Unknown command\n")); err == nil {
		t.Error("an answer without the stats header parsed")
	}
	if _, err := parseStats(strings.NewReader("# pxname,svname\nweb,FRONTEND\n")); err == nil || !strings.Contains(err.Error(), "status") {
		t.Errorf("a header without status: %v", err)
	}
}

// TestConfigChecks: the balancer's configuration passes `haproxy -c` and
// says what the app tier promises (round robin or least connections,
// health checks at the app servers' health path, redispatch).
func TestConfigChecks(t *testing.T) {
	bin, err := HAProxyPath()
	if err != nil {
		testenv.Unavailable(t, "HAProxy", err, "apt-get install haproxy")
	}
	dir := t.TempDir()
	cfg := haproxyConfig(balancerConfig{Listen: "127.0.0.1:18080", Servers: []string{"app1=127.0.0.1:1", "app2=127.0.0.1:2"}, Algorithm: "leastconn",
		Check: 500 * time.Millisecond, Socket: filepath.Join(dir, "s.sock"), Timeout: 5 * time.Second})
	for _, want := range []string{"balance leastconn", "option httpchk GET /healthz", "option redispatch", "inter 500ms fall 2 rise 2", "server app2 127.0.0.1:2", "timeout server 15000ms"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
	path := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "-c", "-f", path).CombinedOutput(); err != nil {
		t.Errorf("haproxy -c: %v\n%s\n%s", err, out, cfg)
	}
}

// TestOptionsRefused: every bad option is refused with what is allowed.
func TestOptionsRefused(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	base := func(nodes int, kv ...string) cluster.Spec {
		s := cluster.Spec{Engine: Name, Nodes: nodes, Options: map[string]string{OptScenario: "records"}}
		for i := 0; i+1 < len(kv); i += 2 {
			s.Options[kv[i]] = kv[i+1]
		}
		return s
	}
	if o, err := parseOptions(base(1, OptMaxQueue, "8")); err != nil || o.maxQueue != 8 {
		t.Errorf("max_queue=8: %+v, %v", o, err)
	}
	o, err := parseOptions(base(0, "set.records.eager", "true", OptBalance, "leastconn"))
	if err != nil || o.servers != 2 || o.balance != "leastconn" || len(o.sets) != 1 || o.sets[0] != "records.eager=true" || o.maxInFlight != 16 {
		t.Errorf("defaults %+v, %v", o, err)
	}
	for _, c := range []struct {
		spec cluster.Spec
		want string
	}{
		{base(17), "--nodes 17: nodes=\"17\": out of range; allowed: int in [1, 16]"},
		{cluster.Spec{Options: map[string]string{}}, "--scenario is required"},
		{base(1, "workers", "4"), `they take: balance, cache_cluster`},
		{base(1, "max_inflihgt", "4"), `(did you mean "max_inflight"?)`},
		{base(1, OptBalance, "random"), "allowed: roundrobin|leastconn"},
		{base(1, OptRequestTimeout, "0s"), "out of range; allowed: duration in [1ms, 1h0m0s]"},
		{base(1, OptCheck, "10ms"), "out of range; allowed: duration in [100ms, 1m0s]"},
		{base(1, OptMaxInFlight, "-1"), "out of range; allowed: int in [0, 1048576]"},
		{base(1, OptMaxQueue, "-1"), "out of range"},
		{base(1, OptMaxInFlight, "0", OptMaxQueue, "8"), "needs a bound on the requests at once"},
		{base(1, "set.records.secret_file", "/x"), "sets it itself"},
		{base(1, OptStore, "nosuch"), "the store"},
		{cluster.Spec{Nodes: 1, Replicas: 1, Options: map[string]string{OptScenario: "records"}}, `--replicas 1: app clusters take no option "replicas"`},
	} {
		if _, err := parseOptions(c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.spec.Options, err, c.want)
		}
	}
}
