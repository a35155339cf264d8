package postgres_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scalelab/scalelab/cli"
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
	"github.com/scalelab/scalelab/setting"
)

// TestMain lets the test binary stand in for the scalelab command: with
// SCALELAB_TEST_CLI=1 it runs the command line given after the test flags
// and exits, so that a test can run `scalelab cluster up` as a process of
// its own and check that the cluster outlives it.
func TestMain(m *testing.M) {
	if os.Getenv("SCALELAB_TEST_CLI") == "1" {
		os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(enginetest.Run(m)) // stops the shared test server (pgtest.Shared)
}

// scalelab runs the command line in a child process.
func scalelab(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SCALELAB_TEST_CLI=1")
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, string(out)
}

// run runs the command line in this process.
func run(args ...string) (int, string) {
	var out bytes.Buffer
	code := cli.Main(context.Background(), args, &out, &out)
	return code, out.String()
}

// TestLocalCluster is the end-to-end check of a local cluster: `cluster up`
// (a primary and a streaming replica, from a process that exits), status,
// loopback-only listening, password required, TLS verified, a logs run
// writing on the primary and reading from the replica with correct counts
// and a measured freshness, a ycsb run, and `cluster down` leaving no
// process, port or file behind.
func TestLocalCluster(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SCALELAB_HOME", home)
	code, out := scalelab(t, "cluster", "up", "postgres", "--name", "pg1", "--replicas", "1",
		"--opt", "fsync=off", "--opt", "full_page_writes=off", "--opt", "tls=on")
	if code != 0 {
		t.Fatalf("cluster up: exit %d\n%s", code, out)
	}
	st, err := cluster.Load("pg1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.StopAll(st, 5*time.Second) })
	if !strings.Contains(out, "target: postgres://scalelab@127.0.0.1:") || !strings.Contains(out, "mode 0600") {
		t.Errorf("cluster up output:\n%s", out)
	}
	if fi, err := os.Stat(st.SecretFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("secret file: %v %v", fi, err)
	}
	pw, err := st.Password()
	if err != nil || strings.Contains(out, pw) {
		t.Fatalf("password %v, or it was printed", err)
	}
	if len(st.Nodes) != 2 || st.Nodes[0].Role != postgres.RolePrimary || st.Nodes[1].Role != postgres.RoleReplica {
		t.Fatalf("nodes %+v", st.Nodes)
	}
	// The servers outlived the process that started them.
	for _, n := range st.Nodes {
		if !cluster.Alive(n.PID) {
			t.Fatalf("%s (pid %d) died with the scalelab that started it", n.Name, n.PID)
		}
	}

	t.Run("status", func(t *testing.T) {
		code, out := run("cluster", "status", "pg1")
		if code != 0 || !strings.Contains(out, "primary") || !strings.Contains(out, "state=streaming") || !strings.Contains(out, "lag_bytes=") {
			t.Errorf("status: exit %d\n%s", code, out)
		}
		code, out = run("cluster", "status", "pg1", "--json")
		var js []map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &js) != nil || len(js) != 1 {
			t.Errorf("status --json: %d %s", code, out)
		}
	})

	t.Run("loopback only, password required", func(t *testing.T) {
		for _, n := range st.Nodes {
			addrs := listeners(t, n.Port)
			if len(addrs) != 1 || addrs[0] != "127.0.0.1" {
				t.Errorf("%s listens on %v, want 127.0.0.1 only", n.Name, addrs)
			}
			for _, pass := range []string{"", "wrong-password"} {
				cfg, _ := pgx.ParseConfig(fmt.Sprintf("host=127.0.0.1 port=%d user=scalelab dbname=scalelab sslmode=disable", n.Port))
				cfg.Password = pass
				if c, err := pgx.ConnectConfig(context.Background(), cfg); err == nil {
					c.Close(context.Background())
					t.Errorf("%s accepted a connection with password %q", n.Name, pass)
				}
			}
			hba, err := os.ReadFile(filepath.Join(n.DataDir, "pg_hba.conf"))
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(string(hba), "\n") {
				if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") && (f[len(f)-1] != "scram-sha-256" || (f[0] == "host" && f[3] != "127.0.0.1/32")) {
					t.Errorf("%s pg_hba.conf entry %q: want scram-sha-256 from 127.0.0.1 only", n.Name, line)
				}
			}
		}
	})

	t.Run("tls", func(t *testing.T) {
		ctx := context.Background()
		open := func(assignments ...string) (*postgres.Conn, error) {
			e, _ := engine.Lookup(postgres.Name)
			set := setting.NewSet(e.Settings()...)
			for _, a := range assignments {
				if err := set.Apply(a); err != nil {
					t.Fatal(err)
				}
			}
			c, err := e.Open(ctx, engine.Config{Target: st.Target, Settings: set, Cluster: st})
			if err != nil {
				return nil, err
			}
			return c.(*postgres.Conn), nil
		}
		for _, mode := range []string{"on", "verify-ca", "insecure", "off"} {
			c, err := open("postgres.tls=" + mode)
			if err != nil {
				t.Fatalf("tls=%s: %v", mode, err)
			}
			var ssl bool
			if err := c.Primary().QueryRow(ctx, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&ssl); err != nil || ssl != (mode != "off") {
				t.Errorf("tls=%s: ssl %t %v", mode, ssl, err)
			}
			c.Close()
		}
		// Another CA: the server's certificate does not verify.
		other := filepath.Join(t.TempDir(), "other")
		os.Mkdir(other, 0o700)
		if _, err := postgres.WriteTestCA(other); err != nil {
			t.Fatal(err)
		}
		for _, mode := range []string{"on", "verify-ca"} {
			if c, err := open("postgres.tls="+mode, "postgres.tls_ca_file="+filepath.Join(other, "ca.crt")); err == nil {
				c.Close()
				t.Errorf("tls=%s with another CA connected", mode)
			}
		}
	})

	t.Run("logs on primary and replica", func(t *testing.T) {
		replicaReads := func() int64 {
			var n int64
			err := withNode(st, st.Nodes[1], func(c *pgx.Conn) error {
				return c.QueryRow(context.Background(), "SELECT COALESCE(sum(seq_scan + COALESCE(idx_scan, 0)), 0)::bigint FROM pg_stat_user_tables WHERE relname = 'logs'").Scan(&n)
			})
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		dir := filepath.Join(t.TempDir(), "logs")
		code, out := run("run", "logs", "--engine", "postgres", "--cluster", "pg1", "--users", "4", "--duration", "6s", "--out", dir, "--progress", "off",
			"--set", "postgres.read_from=replicas", "--set", "postgres.ryw_window=500ms", "--set", "logs.records=5000",
			"--set", "logs.mix=write:10,write_bulk:1,read:10,count_a:5,count_b:5,count_c:5,errors_per_host:2,search:2,freshness:1",
			"--set", "logs.batch_size=100", "--set", "logs.freshness_records=1000", "--set", "logs.freshness_rate=5000")
		if code != 0 {
			t.Fatalf("run: exit %d\n%s", code, out)
		}
		r := resultstest.Read(t, dir)
		if r.Status != results.StatusOK || len(r.Failures) > 0 {
			t.Fatalf("status %s, failures %v", r.Status, r.Failures)
		}
		for _, op := range []string{"logs.write", "logs.read", "logs.count_a", "logs.count_b", "logs.count_c", "logs.errors_per_host", "logs.search"} {
			s := r.Summary[op]
			if s.Count == 0 || s.ErrorsByClass["integrity"] > 0 {
				t.Errorf("%s: %d done, errors %v", op, s.Count, s.ErrorsByClass)
			}
		}
		fresh, _ := r.ScenarioReport["freshness"].(map[string]any)
		delay, _ := fresh["delay_ms"].(map[string]any)
		if min, _ := delay["min"].(float64); fresh == nil || min <= 0 {
			t.Errorf("freshness report: %v", r.ScenarioReport)
		}
		x := r.Server.Extra
		if x["read_from"] != "replicas" || x["replicas"] != "1" || x["fsync"] != "off" || x["shared_buffers"] != "128MB" || x["synchronous_commit"] == "" || !strings.HasPrefix(r.Server.Version, "PostgreSQL 15") {
			t.Errorf("server facts: %s %v", r.Server.Version, x)
		}
		raw, _ := os.ReadFile(filepath.Join(dir, results.RunFile))
		if strings.Contains(string(raw), pw) {
			t.Error("run.json holds the password")
		}
		checkTelemetry(t, dir, r)
		// The replica answered queries (its statistics reach the view
		// within about a second).
		deadline := time.Now().Add(5 * time.Second)
		for replicaReads() == 0 {
			if time.Now().After(deadline) {
				t.Fatal("no query reached the replica")
			}
			time.Sleep(200 * time.Millisecond)
		}
	})

	t.Run("wrong answers fail the run", func(t *testing.T) {
		// Load, then move half the records to another machine behind
		// scalelab's back: counts by machine no longer match the ground
		// truth.
		if code, out := run("run", "logs", "--engine", "postgres", "--cluster", "pg1", "--load-only", "--out", filepath.Join(t.TempDir(), "load"),
			"--progress", "off", "--set", "logs.records=3000"); code != 0 {
			t.Fatalf("load: exit %d\n%s", code, out)
		}
		err := withNode(st, st.Nodes[0], func(c *pgx.Conn) error {
			_, err := c.Exec(context.Background(), "UPDATE logs SET machine = 'intruder' WHERE id % 2 = 0")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "corrupt")
		code, out := run("run", "logs", "--engine", "postgres", "--cluster", "pg1", "--ops", "200", "--out", dir, "--progress", "off",
			"--set", "logs.load=false", "--set", "logs.mix=count_b:1,read:1")
		if code != cli.ExitCheckFailed {
			t.Fatalf("run over corrupted records: exit %d, want %d\n%s", code, cli.ExitCheckFailed, out)
		}
		r, err := results.Read(dir)
		if err != nil || r.Status != results.StatusFailed || r.Summary["logs.count_b"].ErrorsByClass["integrity"] == 0 {
			t.Fatalf("run.json: %v %+v", err, r)
		}
	})

	t.Run("ycsb", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "ycsb")
		code, out := run("run", "ycsb", "--engine", "postgres", "--cluster", "pg1", "--ops", "3000", "--out", dir, "--progress", "off",
			"--set", "ycsb.records=2000", "--set", "ycsb.verify=true", "--set", "ycsb.workload=b")
		if code != 0 {
			t.Fatalf("ycsb: exit %d\n%s", code, out)
		}
	})

	code, out = scalelab(t, "cluster", "down", "pg1")
	if code != 0 || !strings.Contains(out, "stopped and removed") {
		t.Fatalf("down: exit %d\n%s", code, out)
	}
	for _, n := range st.Nodes {
		if cluster.Alive(n.PID) {
			t.Errorf("%s (pid %d) survived cluster down", n.Name, n.PID)
		}
		if a := listeners(t, n.Port); len(a) > 0 || cluster.Listening(fmt.Sprintf("127.0.0.1:%d", n.Port)) {
			t.Errorf("port %d of %s still listening: %v", n.Port, n.Name, a)
		}
	}
	if procs := processesUnder(t, st.Dir); len(procs) > 0 {
		t.Errorf("processes left running from %s: %v", st.Dir, procs)
	}
	if _, err := os.Stat(st.Dir); !os.IsNotExist(err) {
		t.Errorf("cluster directory left behind: %v", err)
	}
}

// withNode connects to a node of st as the cluster's user.
func withNode(st *cluster.State, n cluster.Node, f func(*pgx.Conn) error) error {
	pw, err := st.Password()
	if err != nil {
		return err
	}
	cfg, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", n.Host, n.Port, st.User, postgres.ClusterDB))
	if err != nil {
		return err
	}
	cfg.Password = pw
	c, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	return f(c)
}

// listeners returns the local addresses listening on TCP port (IPv4 and
// IPv6), from /proc/net.
func listeners(t *testing.T, port int) []string {
	t.Helper()
	var out []string
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		file, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(file)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 4 || fields[3] != "0A" { // LISTEN
				continue
			}
			host, p, _ := strings.Cut(fields[1], ":")
			if pn, _ := strconv.ParseUint(p, 16, 32); int(pn) != port {
				continue
			}
			out = append(out, hexAddr(host))
		}
		file.Close()
	}
	return out
}

// hexAddr turns /proc/net's little-endian hex IPv4 address into dotted
// form; IPv6 addresses stay hex.
func hexAddr(h string) string {
	if len(h) != 8 {
		return h
	}
	v, _ := strconv.ParseUint(h, 16, 32)
	return fmt.Sprintf("%d.%d.%d.%d", v&0xff, v>>8&0xff, v>>16&0xff, v>>24)
}

// processesUnder lists processes whose command line names dir.
func processesUnder(t *testing.T, dir string) []string {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(dir)) || !cluster.Alive(pid) {
			continue
		}
		out = append(out, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
	}
	return out
}
