package cli

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine/memcached"
	"github.com/scalelab/scalelab/results/resultstest"
)

// TestMemcachedCluster runs what a new user runs: a local memcached server
// (no authentication, loopback only, said so), ycsb and social on it as
// the store where they need no scans, a clear refusal (exit 2, before any
// load) where they do, the server as the cache tier in front of SQLite,
// and `cluster down`.
func TestMemcachedCluster(t *testing.T) {
	needMemcached(t)
	t.Setenv("SCALELAB_HOME", t.TempDir())
	ctx := context.Background()
	st, out := upLoadedCluster(t, "memcached", "m1", "--opt", "memory_mb=64", "--opt", "threads=2")
	if !strings.Contains(out, "cluster m1 (memcached) is up") || !strings.Contains(out, "auth: none") || !strings.Contains(out, "127.0.0.1 only") {
		t.Fatalf("up: %s", out)
	}
	if st.Engine != memcached.Name || len(st.Nodes) != 1 || st.Nodes[0].Host != cluster.Loopback || st.Params["memory_mb"] != "64" {
		t.Fatalf("state %+v", st)
	}
	if os.Geteuid() == 0 && st.Params["os_user"] == "" {
		t.Errorf("run as root, the server did not switch user: %v", st.Params)
	}
	code, out, _ := run(t, ctx, "cluster", "status", "m1")
	if code != 0 || !strings.Contains(out, "limit_maxbytes=67108864") {
		t.Fatalf("status: %d %s", code, out)
	}
	if h, err := cluster.CheckHealth(ctx, st); err != nil || !h.Healthy() {
		t.Fatalf("health %v %v", h, err)
	}

	// the store: reads and writes by key, checked
	for _, args := range [][]string{
		{"ycsb", "--set", "ycsb.workload=a", "--set", "ycsb.verify=true", "--set", "ycsb.records=500", "--duration", "2s"},
		{"social", "--set", "social.mix=d2", "--set", "social.users=300", "--ops", "1000"},
	} {
		dir := filepath.Join(t.TempDir(), args[0])
		code, out, errs := run(t, ctx, append(append([]string{"run"}, args...), "--cluster", "m1", "--out", dir, "--progress", "off")...)
		if code != 0 {
			t.Fatalf("%v: %d %s %s", args, code, out, errs)
		}
		r := resultstest.Read(t, dir)
		if r.Engine != memcached.Name || r.Server == nil || !strings.HasPrefix(r.Server.Version, "memcached 1.") || r.Totals == nil || r.Totals.Count == 0 || r.Totals.Errors != 0 {
			t.Fatalf("%v: server %+v totals %+v", args, r.Server, r.Totals)
		}
	}
	// what needs scans or counts is refused before any load, saying why
	for _, args := range [][]string{
		{"ycsb", "--set", "ycsb.workload=e"},
		{"social"},
		{"social", "--set", "social.mix=d2", "--set", "social.load=false"},
	} {
		dir := filepath.Join(t.TempDir(), "refused")
		code, out, errs := run(t, ctx, append(append([]string{"run"}, args...), "--cluster", "m1", "--duration", "1s", "--out", dir, "--progress", "off")...)
		if code != ExitUsage || !strings.Contains(errs, "reads and writes by key only") || !strings.Contains(errs, "engine not supported") {
			t.Errorf("%v: %d %s %s", args, code, out, errs)
		}
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%v: the refused run left its results directory: %v", args, err)
		}
	}

	// the cache tier in front of SQLite
	dir := filepath.Join(t.TempDir(), "cache")
	code, out, errs := run(t, ctx, "run", "ycsb", "--engine", "sqlite", "--cache", "memcached", "--cache-cluster", "m1",
		"--set", "cache.memcached.max_idle_conns=16", "--set", "ycsb.records=300", "--set", "ycsb.workload=b", "--set", "ycsb.verify=true",
		"--duration", "2s", "--out", dir, "--progress", "off")
	if code != 0 {
		t.Fatalf("cache run: %d %s %s", code, out, errs)
	}
	r := resultstest.Read(t, dir)
	if len(r.Tiers) != 1 || r.Tiers[0].Engine != memcached.Name || r.Tiers[0].Settings["memcached.max_idle_conns"] != "16" || r.Tiers[0].Server == nil {
		t.Fatalf("tiers %+v", r.Tiers)
	}
	cacheReport(t, r)
	checkHitRate(t, ctx, memcached.Name, "m1")

	// social through it: the friend walk's profile reads hit, updates
	// and deletes invalidate, and the audit finds every write
	dir = filepath.Join(t.TempDir(), "social-cache")
	code, out, errs = run(t, ctx, "run", "social", "--engine", "sqlite", "--cache", "memcached", "--cache-cluster", "m1",
		"--set", "social.users=300", "--duration", "2s", "--out", dir, "--progress", "off")
	if code != 0 {
		t.Fatalf("social cache run: %d %s %s", code, out, errs)
	}
	r = resultstest.Read(t, dir)
	c := cacheReport(t, r)
	if inv, ok := c["invalidations"].(float64); !ok || inv == 0 || c["engine"] != memcached.Name || c["invalidate_errors"] != float64(0) {
		t.Errorf("social through memcached: %v", c)
	}
	if a := r.Audit; a == nil || !a.Checked || a.Registers == nil || a.Registers.Acknowledged == 0 || a.Registers.Lost != 0 {
		t.Errorf("social through memcached: audit %+v", r.Audit)
	}

	// no authentication: a target with a user or password is a usage error
	code, _, errs = run(t, ctx, "run", "ycsb", "--engine", "memcached", "--target", "memcached://u:hunter2@"+st.Nodes[0].ClientAddress(),
		"--out", filepath.Join(t.TempDir(), "auth"), "--progress", "off")
	if code != ExitUsage || strings.Contains(errs, "hunter2") {
		t.Fatalf("a target with a password: %d %s", code, errs)
	}

	code, out, _ = run(t, ctx, "cluster", "down", "m1")
	if code != 0 || !strings.Contains(out, "stopped and removed") {
		t.Fatalf("down: %d %s", code, out)
	}
	gone(t, st.Nodes[0])
}
