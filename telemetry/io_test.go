package telemetry

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// A node's bytes written are those its process tree wrote during the
// measured window: not the bytes written before it (by the same process
// while sampled, counted since the process started), and bytes written by
// a child that exited are counted once (the kernel adds a reaped child's
// counters to its parent's). The tree writes M = 3 MiB before Measure and
// N = 512 KiB, as 512 synced 1 KiB writes to one file (which write_bytes
// counts as a dirtied page each), inside the window.
func TestSamplerWritesOfTheWindow(t *testing.T) {
	t.Parallel()
	const before, during = 3 << 20, 512 << 10
	dir := t.TempDir()
	f1, f2 := filepath.Join(dir, "before"), filepath.Join(dir, "during")
	script := fmt.Sprintf(`read x; head -c %d /dev/zero > %s; echo a; read x; `+
		`dd if=/dev/zero of=%s bs=1024 count=%d oflag=dsync conv=notrunc status=none; echo b; read x`, before, f1, f2, during/1024)
	cmd := exec.Command("sh", "-c", script)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewReader(stdout)
	step := func(want string) {
		t.Helper()
		if _, err := io.WriteString(stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
		if l, err := lines.ReadString('\n'); err != nil || l != want+"\n" {
			t.Fatalf("child said %q, %v; want %q", l, err, want)
		}
	}
	s, err := Start(Config{Dir: dir, Start: time.Now(), Interval: 100 * time.Millisecond, Nodes: []Node{{Tier: "store", Name: "writer", PID: cmd.Process.Pid}}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(250 * time.Millisecond) // sampled before it writes
	step("a")
	time.Sleep(250 * time.Millisecond) // and after, before the window
	s.Measure()
	step("b")
	s.Stop() // the bytes since the last sample count too
	var got int64 = -1
	for _, n := range s.Summary(1).Nodes {
		if n.Node == "writer" {
			got = n.WriteBytes
		}
	}
	// the tree's own writes besides dd's: "b\n" on stdout
	if got < during || got > during+4096 {
		t.Errorf("written in the window: %d bytes, want %d (the %d before the window left out)", got, during, before)
	}
}
