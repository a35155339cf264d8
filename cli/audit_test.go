package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuditMemoryRunRefused: `scalelab audit DIR` of a finished memory
// engine run refuses before reading back (its data lived in the run's
// process): exit 2, saying why, and run.json and report.html untouched.
func TestAuditMemoryRunRefused(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "r")
	if code, out, errs := run(t, context.Background(), "run", "ycsb", "--engine", "memory", "--users", "2", "--ops", "2000", "--out", dir, "--progress", "off"); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	untouched := keepFiles(t, dir, "run.json", "report.html")
	code, out, errs := run(t, context.Background(), "audit", dir)
	if code != ExitUsage || !strings.Contains(errs, "the memory engine keeps its data in the run's process, which has ended: there is nothing to read back") || strings.Contains(out, "read back") {
		t.Fatalf("audit of a memory run: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	untouched(t)
}

// TestAuditMissingStoreFile: `scalelab audit DIR` of a SQLite run whose
// store file, sqlite.db in its results directory, was deleted is exit 4
// naming the file; the file is not created and run.json and report.html
// are untouched. (runner's TestReauditMissingTargetFile deletes a
// --target file.)
func TestAuditMissingStoreFile(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "r")
	if code, out, errs := run(t, context.Background(), "run", "ycsb", "--users", "2", "--ops", "2000", "--set", "ycsb.records=200", "--out", dir, "--progress", "off"); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	file := filepath.Join(dir, "sqlite.db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(file + suffix); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	untouched := keepFiles(t, dir, "run.json", "report.html")
	code, out, errs := run(t, context.Background(), "audit", dir)
	if code != ExitUnfinished || !strings.Contains(errs, file+" no longer exists") || strings.Contains(out, "read back") {
		t.Errorf("audit without the store file: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the audit created %s (stat: %v)", file, err)
	}
	untouched(t)
}

// keepFiles reads the named files of dir now and returns a check that
// they are unchanged.
func keepFiles(t *testing.T, dir string, names ...string) func(*testing.T) {
	t.Helper()
	was := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		was[n] = b
	}
	return func(t *testing.T) {
		t.Helper()
		for _, n := range names {
			b, err := os.ReadFile(filepath.Join(dir, n))
			if err != nil || !bytes.Equal(b, was[n]) {
				t.Errorf("%s changed (read: %v)", n, err)
			}
		}
	}
}
