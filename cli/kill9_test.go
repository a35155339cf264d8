package cli

import (
	"errors"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// killedMemoryRun builds the binary, starts `scalelab run ycsb` on the
// memory engine (1 ms a call, 100 records, a minute, no progress line)
// with extra arguments, and kills it with SIGKILL once series.csv holds 6
// measured rows. It returns the run's directory.
func killedMemoryRun(t *testing.T, extra ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "killed")
	args := append([]string{"run", "ycsb", "--engine", "memory", "--duration", "1m", "--set", "memory.latency=1ms",
		"--set", "ycsb.records=100", "--out", dir, "--progress", "off"}, extra...)
	cmd := exec.Command(buildBinary(t), args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killWhenReady(t, cmd, time.Minute, 0, measuredAtLeast(t, dir, 6))
	return dir
}

// errFewIntervals is what measuredAtLeast reports until the run has written
// the intervals it waits for.
var errFewIntervals = errors.New("the run wrote too few measured intervals")

// measuredAtLeast returns a readiness check for killWhenReady: series.csv
// in dir holds at least n measured rows.
func measuredAtLeast(t *testing.T, dir string, n int) func() error {
	return func() error {
		if measuredRows(t, dir) < n {
			return errFewIntervals
		}
		return nil
	}
}

// killWhenReady waits until ready returns nil (polling every 200 ms, for
// at most within), waits grace more, then kills cmd with SIGKILL, as if
// the machine lost power, and reaps it. When ready is still failing after
// within, it kills cmd and fails t with ready's last error.
func killWhenReady(t *testing.T, cmd *exec.Cmd, within, grace time.Duration, ready func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := ready()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("not ready to kill after %v: %v", within, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(grace)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}
