// Package testproc acts on the server processes tests start: it stops one
// and waits until it really is stopped.
package testproc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Stop sends SIGSTOP to pid and waits until every thread of it is stopped
// (state T in /proc/PID/task/TID/stat): kill returns before a busy thread
// has stopped, and such a thread may still answer a request.
func Stop(t testing.TB, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		stats, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		all := len(stats) > 0
		for _, f := range stats {
			b, err := os.ReadFile(f)
			i := bytes.LastIndexByte(b, ')')
			all = all && err == nil && i >= 0 && i+2 < len(b) && b[i+2] == 'T'
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d not stopped 5 s after SIGSTOP", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// WhileStopped runs fn while pid is stopped (Stop) and lets pid go on
// (SIGCONT) after it, also when fn fails the test.
func WhileStopped(t testing.TB, pid int, fn func()) {
	t.Helper()
	Stop(t, pid)
	defer func() {
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}()
	fn()
}
