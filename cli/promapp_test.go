package cli

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scalelab/scalelab/app"
	"github.com/scalelab/scalelab/apptier"
	"github.com/scalelab/scalelab/promsource/promtest"
	"github.com/scalelab/scalelab/runner"
)

// startServeProcess starts `scalelab serve args...` as a process of its
// own (this test binary, which runs the command line when apptier.EnvCLI
// is set), waits until it answers at addr and stops it when the test ends.
func startServeProcess(t *testing.T, addr string, args ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), apptier.EnvCLI+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setsid: true}
	logf := promtest.StartUntilCleanup(t, cmd, "serve.log", 10*time.Second)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + app.HealthPath); err == nil {
			resp.Body.Close()
			// the machine is shared: the server under test comes first
			promtest.Renice(t, cmd.Process.Pid, -15)
			return
		}
	}
	b, _ := os.ReadFile(logf.Name())
	t.Fatalf("serve did not answer at %s within 30 s:\n%s", addr, b)
}

// TestHandStartedAppServerSaturates: a records site served by hand with
// one core (`scalelab serve records --procs 1`) and driven hard over
// HTTP. Without a telemetry source the verdict says the app tier is not
// observed; with Prometheus scraping the server's /metrics
// (process_cpu_seconds_total, its GOMAXPROCS as the limit) it names the
// app server as saturated.
func TestHandStartedAppServerSaturates(t *testing.T) {
	skipShort(t, "starts Prometheus and an app server")
	// the site's SQLite file in memory (tmpfs) where there is one: its
	// server waits for no disk, so its CPU is what limits it
	dbDir, err := os.MkdirTemp("/dev/shm", "scalelab-records-")
	if err != nil {
		dbDir = t.TempDir()
	} else {
		t.Cleanup(func() { os.RemoveAll(dbDir) })
	}
	db := filepath.Join(dbDir, "records.db")
	addr := promtest.FreeAddr(t)
	sets := []string{"records.bcrypt_cost=10", "records.providers=200", "records.patients=100", "records.think_page=0s", "records.think_form=0s"}
	startServeProcess(t, addr, "records", "--target", db, "--listen", addr, "--procs", "1", "--max-inflight", "2", "--set", "records.bcrypt_cost=10")
	prom := promtest.Prometheus(t, map[string][]string{"app": {addr}})
	prom.WaitUp(t, "app", 1)
	promtest.Renice(t, os.Getpid(), -10) // the generator must keep the server busy
	opts := func(dir string) *runner.Options {
		return &runner.Options{Scenario: "records", Target: db, Users: 16, Duration: 6 * time.Second, Out: dir, Telemetry: 500 * time.Millisecond,
			Sets: append([]string{"records.app=http://" + addr}, sets...)}
	}

	doc, out, err := runOpts(t, opts(filepath.Join(t.TempDir(), "blind")))
	if err != nil {
		t.Fatalf("run without a source: %v\n%s", err, out)
	}
	tel := doc.Telemetry
	t.Logf("without a source: %s", tel.Saturation)
	if !strings.HasPrefix(tel.Saturation, "unknown: the app tier at http://"+addr+" is not observed") || tel.Saturated != nil {
		t.Errorf("verdict %q, want it unknown with the app tier not observed", tel.Saturation)
	}
	if len(tel.Unobserved) != 1 || tel.Unobserved[0].Tier != "app" {
		t.Errorf("unobserved %+v", tel.Unobserved)
	}
	if !strings.Contains(out, "saturation: unknown: the app tier at") {
		t.Errorf("terminal:\n%s", out)
	}

	o := opts(filepath.Join(t.TempDir(), "seen"))
	o.TelemetrySource = "prometheus=" + prom.URL
	o.Observe = []string{`app=process_cpu_seconds_total{job="app"}`}
	doc, out, err = runOpts(t, o)
	if err != nil {
		t.Fatalf("run with Prometheus: %v\n%s", err, out)
	}
	tel = doc.Telemetry
	var node string
	for _, n := range tel.Nodes {
		if n.Tier == "app" {
			node = n.Node
			t.Logf("app server through Prometheus: %s, mean %.2f cores, max %.2f, at its limit of %v in %.0f%% of the samples", n.Node, n.CPUMeanCores, n.CPUMaxCores, n.Limits, 100*n.AtLimitShare)
			if n.Source != "prometheus" || n.Limits == nil || n.Limits.CPUs != 1 {
				t.Errorf("app node %+v, want its GOMAXPROCS 1 as its limit", n)
			}
		}
	}
	t.Logf("with Prometheus: %s", tel.Saturation)
	if node != addr+"/app" || tel.Saturated == nil || tel.Saturated.Tier != "app" || !strings.HasPrefix(tel.Saturation, "app "+addr+"/app saturated: at its CPU limit of 1 cores") {
		t.Errorf("verdict %q (%+v), want the app server %s saturated", tel.Saturation, tel.Saturated, addr)
	}
	if len(tel.Unobserved) != 0 {
		t.Errorf("unobserved %+v", tel.Unobserved)
	}
}
