package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLogTail keeps a log's last non-blank lines, cut when long.
func TestLogTail(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "node1.log")
	text := "one\n\ntwo\r\n   \nthree  \n" + strings.Repeat("x", 2*tailWidth) + "\n\n\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := LogTail(path, 3)
	if err != nil || len(got) != 3 || got[0] != "two" || got[1] != "three" || !strings.HasSuffix(got[2], " …") || len(got[2]) > tailWidth+5 {
		t.Fatalf("LogTail = %q, %v", got, err)
	}
	if _, err := LogTail(filepath.Join(t.TempDir(), "none.log"), 3); err == nil {
		t.Fatal("LogTail of a missing log: no error")
	}
}

// TestFailedLogs shows the logs of the nodes that exited, of every node
// when the start timed out, of none otherwise, with the cluster's
// password masked.
func TestFailedLogs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := &State{Name: "c1", Dir: dir, SecretFile: filepath.Join(dir, "password")}
	pw, err := NewSecret(st.SecretFile)
	if err != nil {
		t.Fatal(err)
	}
	for i, pid := range []int{os.Getpid(), 1 << 30} { // node1 runs, node2 exited
		n := Node{Name: fmt.Sprintf("node%d", i+1), PID: pid, LogFile: filepath.Join(dir, fmt.Sprintf("node%d.log", i+1))}
		if err := os.WriteFile(n.LogFile, []byte(n.Name+" says hello\nauth with "+pw+"\n\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		st.Nodes = append(st.Nodes, n)
	}
	got := failedLogs(st, errors.New("waiting: "+ErrNodeExited.Error()))
	want := "\nnode2 (exited), the end of its log:\n  node2 says hello\n  auth with [password]"
	if got != want {
		t.Errorf("a node exited: %q, want %q", got, want)
	}
	st.Nodes[1].PID = os.Getpid()
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	<-ctx.Done()
	got = failedLogs(st, fmt.Errorf("up: %w", ctx.Err()))
	if !strings.Contains(got, "node1 (running), the end of its log:\n  node1 says hello") || !strings.Contains(got, "node2 (running)") || strings.Contains(got, pw) {
		t.Errorf("a timeout: %q", got)
	}
	if got := failedLogs(st, errors.New("injected failure")); got != "" {
		t.Errorf("every node runs and no timeout: %q", got)
	}
}
