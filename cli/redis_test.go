package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine/redis"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// noSecret fails t when the password shows in any file of dir.
func noSecret(t *testing.T, dir, secret string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), secret) {
			t.Errorf("%s shows the password", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// cacheReport returns run.json's scenario_report.cache after checking it
// counted hits and misses and a hit rate in (0, 1].
func cacheReport(t *testing.T, r *results.Run) map[string]any {
	t.Helper()
	cache, _ := r.ScenarioReport["cache"].(map[string]any)
	hits, _ := cache["hits"].(float64)
	misses, _ := cache["misses"].(float64)
	rate, _ := cache["hit_rate"].(float64)
	if hits <= 0 || misses <= 0 || rate <= 0 || rate > 1 || rate != hits/(hits+misses) {
		t.Fatalf("cache report %v: want hits, misses and hit_rate = hits / (hits + misses)", r.ScenarioReport)
	}
	return cache
}

// TestRedisCluster runs what a new user runs: a local Redis server with a
// generated password that nothing prints, ycsb on it as the store (with a
// restart fault: the server comes back, empty, with its recorded
// command), the same server as the cache tier in front of SQLite, a
// target that carries the password (redacted everywhere) or a wrong one,
// and `cluster down`.
func TestRedisCluster(t *testing.T) {
	needRedis(t)
	t.Setenv("SCALELAB_HOME", t.TempDir())
	ctx := context.Background()
	code, out, errs := run(t, ctx, "cluster", "up", "redis", "--name", "r1")
	if code != 0 || !strings.Contains(out, "cluster r1 (redis) is up") || !strings.Contains(out, "auth: requirepass") {
		t.Fatalf("up: %d %s %s", code, out, errs)
	}
	t.Cleanup(func() { run(t, context.Background(), "cluster", "down", "r1") })
	st, err := cluster.Load("r1")
	if err != nil || st.Engine != redis.Name || len(st.Nodes) != 1 || st.Nodes[0].Host != cluster.Loopback {
		t.Fatalf("state %+v %v", st, err)
	}
	pw, err := st.Password()
	if err != nil || len(pw) < 16 {
		t.Fatalf("password: %v", err)
	}
	if fi, err := os.Stat(st.SecretFile); err != nil {
		t.Fatal(err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Fatalf("secret file %s: mode %v, want 0600", st.SecretFile, fi.Mode())
	}
	if strings.Contains(out+errs, pw) {
		t.Fatal("cluster up printed the password")
	}
	code, out, _ = run(t, ctx, "cluster", "status", "r1")
	if code != 0 || !strings.Contains(out, "redis_version=") || strings.Contains(out, pw) {
		t.Fatalf("status: %d %s", code, out)
	}
	if h, err := cluster.CheckHealth(ctx, st); err != nil || !h.Healthy() {
		t.Fatalf("health %v %v", h, err)
	}
	if os.Geteuid() == 0 { // a server is never left running as root
		if uid := processUID(t, st.Nodes[0].PID); uid == 0 || st.Params[redis.ParamOSUser] == "" {
			t.Errorf("redis-server runs as uid %d (os_user %q), want a system user", uid, st.Params[redis.ParamOSUser])
		}
	}

	// the store, with a restart fault
	dir := filepath.Join(t.TempDir(), "store")
	code, out, errs = run(t, ctx, "run", "ycsb", "--cluster", "r1", "--set", "ycsb.records=500", "--set", "ycsb.workload=c",
		"--duration", "3s", "--fault", "restart:node1@1s", "--out", dir, "--progress", "off")
	r := resultstest.Read(t, dir)
	if r.Engine != redis.Name || r.Server == nil || !strings.HasPrefix(r.Server.Version, "Redis ") || r.Server.Target != st.Target {
		t.Fatalf("run: %d %s %s\nserver %+v", code, out, errs, r.Server)
	}
	if len(r.Faults) != 1 || r.Recovery == nil || r.Summary["read"].Count == 0 {
		t.Fatalf("faults %+v recovery %+v summary %+v", r.Faults, r.Recovery, r.Summary)
	}
	// no persistence: after the restart the records are gone, and reads
	// of them are not found
	if r.Summary["read"].ErrorsByClass["not_found"] == 0 {
		t.Errorf("no read was not found after the restart: %+v", r.Summary["read"])
	}
	after, err := cluster.Load("r1")
	if err != nil || after.Nodes[0].PID == st.Nodes[0].PID || !cluster.Alive(after.Nodes[0].PID) {
		t.Fatalf("after the restart: %+v %v", after.Nodes, err)
	}
	if h, err := cluster.CheckHealth(ctx, after); err != nil || !h.Healthy() {
		t.Fatalf("health after the restart %v %v", h, err)
	}
	noSecret(t, dir, pw)

	// the cache tier in front of SQLite
	dir = filepath.Join(t.TempDir(), "cache")
	code, out, errs = run(t, ctx, "run", "ycsb", "--engine", "sqlite", "--cache", "redis", "--cache-cluster", "r1",
		"--set", "ycsb.records=300", "--set", "ycsb.workload=b", "--set", "ycsb.verify=true", "--duration", "2s", "--out", dir, "--progress", "off")
	if code != 0 {
		t.Fatalf("cache run: %d %s %s", code, out, errs)
	}
	r = resultstest.Read(t, dir)
	if len(r.Tiers) != 1 || r.Tiers[0].Engine != redis.Name || r.Tiers[0].Server == nil || r.Tiers[0].Cluster == nil || r.Tiers[0].Cluster.Name != "r1" {
		t.Fatalf("tiers %+v", r.Tiers)
	}
	cacheReport(t, r)
	noSecret(t, dir, pw)
	checkHitRate(t, ctx, redis.Name, "r1")

	// a target that carries the password is refused without being shown
	// and without a results directory; the password from REDISCLI_AUTH
	// works; a wrong one is refused without being shown
	dir = filepath.Join(t.TempDir(), "target")
	addr := st.Nodes[0].ClientAddress()
	code, out, errs = run(t, ctx, "run", "social", "--engine", "redis", "--target", "redis://:"+pw+"@"+addr+"/3",
		"--set", "social.users=300", "--ops", "500", "--out", dir, "--progress", "off")
	if code != ExitUsage || !strings.Contains(errs, "holds a password") || !strings.Contains(errs, redis.PasswordEnv) || strings.Contains(out+errs, pw) {
		t.Fatalf("password in the target: %d %s %s", code, out, errs)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a refused target left %s: %v", dir, err)
	}
	t.Setenv(redis.PasswordEnv, pw)
	code, out, errs = run(t, ctx, "run", "social", "--engine", "redis", "--target", "redis://"+addr+"/3",
		"--set", "social.users=300", "--ops", "500", "--out", dir, "--progress", "off")
	if code != 0 || strings.Contains(out+errs, pw) {
		t.Fatalf("password in %s: %d %s %s", redis.PasswordEnv, code, out, errs)
	}
	if r = resultstest.Read(t, dir); r.Server.Target != "redis://"+addr+"/3" {
		t.Fatalf("target %s", r.Server.Target)
	}
	noSecret(t, dir, pw)
	t.Setenv(redis.PasswordEnv, "not-the-password")
	parent := t.TempDir()
	code, out, errs = run(t, ctx, "run", "ycsb", "--engine", "redis", "--target", "redis://"+addr,
		"--duration", "1s", "--out", filepath.Join(parent, "bad"), "--progress", "off")
	if code != ExitUsage || !strings.Contains(errs, "WRONGPASS") || !strings.Contains(errs, redis.PasswordEnv) || !strings.Contains(errs, redis.KeyPasswordFile) ||
		strings.Contains(out+errs, "not-the-password") {
		t.Fatalf("wrong password: %d %s %s", code, out, errs)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Fatalf("a refused password left a results directory: %v", entries)
	}

	code, out, _ = run(t, ctx, "cluster", "down", "r1")
	if code != 0 || !strings.Contains(out, "stopped and removed") {
		t.Fatalf("down: %d %s", code, out)
	}
	gone(t, after.Nodes[0])
}

// gone fails t unless n's process has ended and, once its last thread has
// exited (its main thread may end first), nothing listens on its port.
func gone(t *testing.T, n cluster.Node) {
	t.Helper()
	if cluster.Alive(n.PID) {
		t.Fatalf("%s (pid %d) survived cluster down", n.Name, n.PID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cluster.WaitFor(ctx, "port "+n.ClientAddress()+" to close", 50*time.Millisecond, func() bool { return !cluster.Listening(n.ClientAddress()) }, nil); err != nil {
		t.Fatal(err)
	}
}

// processUID is the real user id of pid (/proc/PID/status).
func processUID(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
			uid, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatal(err)
			}
			return uid
		}
	}
	t.Fatalf("no Uid line in /proc/%d/status", pid)
	return -1
}
