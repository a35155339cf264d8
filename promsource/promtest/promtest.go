// Package promtest starts, for tests, Debian's Prometheus server and
// exporters (prometheus, prometheus-node-exporter,
// prometheus-postgres-exporter, prometheus-process-exporter) on loopback
// with temporary configurations and a 1 s scrape interval, and stops them
// when the test ends.
package promtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cluster/cgroup"
	"github.com/scalelab/scalelab/internal/testenv"
)

// Install is the command that installs what this package starts.
const Install = "apt-get install prometheus prometheus-node-exporter prometheus-postgres-exporter prometheus-process-exporter"

// FreeAddr returns a loopback address with a free port.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// binary finds a program or marks the test unavailable.
func binary(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		testenv.Unavailable(t, name, err, Install)
	}
	return p
}

// start runs a program until the test ends, logging to a file that the
// test prints when the program fails to come up.
func start(t testing.TB, name string, env []string, args ...string) *os.File {
	t.Helper()
	cmd := exec.Command(binary(t, name), args...)
	cmd.Env = append(os.Environ(), env...)
	return StartUntilCleanup(t, cmd, filepath.Base(name)+".log", 5*time.Second)
}

// StartUntilCleanup starts cmd with its output in a file named logName in
// the test's temporary directory and stops it when the test ends: SIGTERM,
// then SIGKILL after grace. It returns the log file. A cmd without its own
// SysProcAttr dies with the test binary (Pdeathsig).
func StartUntilCleanup(t testing.TB, cmd *exec.Cmd, logName string, grace time.Duration) *os.File {
	t.Helper()
	logf, err := os.Create(filepath.Join(t.TempDir(), logName))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(grace):
			_ = cmd.Process.Kill()
			<-done
		}
		logf.Close()
	})
	return logf
}

// waitHTTP waits until url answers 200, for at most 30 s.
func waitHTTP(t testing.TB, url string, logf *os.File) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	b, _ := os.ReadFile(logf.Name())
	t.Fatalf("%s did not answer within 30 s; its log:\n%s", url, b)
}

// NodeExporter starts node_exporter (CPU and memory collectors only) and
// returns its address.
func NodeExporter(t testing.TB) string {
	addr := FreeAddr(t)
	logf := start(t, "prometheus-node-exporter", nil, "--web.listen-address="+addr, "--collector.disable-defaults", "--collector.cpu", "--collector.meminfo")
	waitHTTP(t, "http://"+addr+"/metrics", logf)
	return addr
}

// PostgresExporter starts postgres_exporter on the server at dsn (a
// postgres:// URL with its password) and returns its address.
func PostgresExporter(t testing.TB, dsn string) string {
	addr := FreeAddr(t)
	logf := start(t, "prometheus-postgres-exporter", []string{"DATA_SOURCE_NAME=" + dsn}, "--web.listen-address="+addr)
	waitHTTP(t, "http://"+addr+"/metrics", logf)
	return addr
}

// ProcessExporter starts process-exporter with a group per name: the
// processes whose command line matches its regular expression, and their
// children (a PostgreSQL server's postmaster and every backend it forks).
// It returns its address.
func ProcessExporter(t testing.TB, groups map[string]string) string {
	addr := FreeAddr(t)
	cfg := "process_names:\n"
	for name, re := range groups {
		cfg += fmt.Sprintf("  - name: %q\n    cmdline: [%q]\n", name, re)
	}
	path := filepath.Join(t.TempDir(), "process-exporter.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	logf := start(t, "prometheus-process-exporter", nil, "-web.listen-address", addr, "-config.path", path)
	waitHTTP(t, "http://"+addr+"/metrics", logf)
	return addr
}

// Server is a running Prometheus.
type Server struct {
	URL string
}

// Prometheus starts a Prometheus server scraping every job's targets
// (host:port, /metrics) each second, with the remote-write receiver on,
// and returns it.
func Prometheus(t testing.TB, jobs map[string][]string) *Server {
	t.Helper()
	addr := FreeAddr(t)
	var b strings.Builder
	b.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\nscrape_configs:\n")
	for job, targets := range jobs {
		fmt.Fprintf(&b, "  - job_name: %q\n    static_configs:\n      - targets: [%s]\n", job, quoteAll(targets))
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	logf := start(t, "prometheus", nil, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--web.enable-remote-write-receiver", "--storage.tsdb.retention.time=1h")
	waitHTTP(t, "http://"+addr+"/-/ready", logf)
	return &Server{URL: "http://" + addr}
}

func quoteAll(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// WaitUp waits until Prometheus has scraped every target of job
// successfully at least once (up == 1), for at most 30 s.
func (s *Server) WaitUp(t testing.TB, job string, targets int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		v, err := s.Query(ctx, fmt.Sprintf(`sum(up{job=%q})`, job))
		if err == nil && v >= float64(targets) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("prometheus did not scrape job %s within 30 s", job)
}

// WaitTarget waits until Prometheus scrapes job (up exists, whether the
// target answers or not), for at most 30 s: its scrape loop has begun.
func (s *Server) WaitTarget(t testing.TB, job string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if _, err := s.Query(ctx, fmt.Sprintf(`count(up{job=%q})`, job)); err == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("prometheus did not begin scraping job %s within 30 s", job)
}

// Renice gives every thread of process pid the nice value n (threads and
// processes it starts later inherit it), and restores 0 when the test
// ends. Tests that need a process under test to reach its CPU limit on a
// shared machine give it priority over the machine's other work.
func Renice(t testing.TB, pid, n int) {
	t.Helper()
	set := func(v int) error {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return err
		}
		for _, task := range tasks {
			tid, err := strconv.Atoi(task.Name())
			if err != nil {
				continue
			}
			if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, v); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("renice thread %d of %d: %w", tid, pid, err)
			}
		}
		return nil
	}
	if err := set(n); err != nil {
		testenv.Unavailable(t, "renice", err, "run as root")
	}
	// with the kernel's autogroups, nice orders threads within a session
	// only: the process's session group is reniced too (this test
	// binary's own, or a server's started in a session of its own)
	group := fmt.Sprintf("/proc/%d/autogroup", pid)
	mine, _ := os.ReadFile("/proc/self/autogroup")
	theirs, err := os.ReadFile(group)
	// a process that is exiting, or a kernel without autogroups, gives an
	// empty or missing file: there is then no group to renice
	theirName, mineName := firstField(theirs), firstField(mine)
	own := err == nil && theirName != "" && (pid == os.Getpid() || theirName != mineName)
	if own {
		_ = os.WriteFile(group, []byte(strconv.Itoa(n)), 0)
	}
	t.Cleanup(func() {
		_ = set(0)
		if own {
			_ = os.WriteFile(group, []byte("0"), 0)
		}
	})
}

// firstField is the first whitespace-separated field of b, or "" when b
// has none.
func firstField(b []byte) string {
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return ""
}

// Prioritise gives a cgroup and each of its ancestors below the root the
// CPU shares n (1024 is the default), and restores the default when the
// test ends: a node confined to a CPU quota then reaches its quota on a
// shared, busy machine, where the group as a whole would otherwise get no
// more than any other session.
func Prioritise(t testing.TB, path string, n int) {
	t.Helper()
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i := range parts {
		g, err := cgroup.Open(strings.Join(parts[:i+1], "/"))
		if err != nil {
			t.Fatalf("cgroup %s: %v", strings.Join(parts[:i+1], "/"), err)
		}
		if err := g.SetShares(n); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = g.SetShares(1024) })
	}
}
