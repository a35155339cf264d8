package netns

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/internal/testenv"
)

// TestMain lets the test binary serve as a node inside a namespace:
// NETNS_TEST_LISTEN=ADDR answers "ok" to every connection,
// NETNS_TEST_BULK=ADDR sends bulkBytes to every connection,
// NETNS_TEST_DIAL=ADDR exits 0 when ADDR answers.
func TestMain(m *testing.M) {
	if addr := os.Getenv("NETNS_TEST_LISTEN"); addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for {
			c, err := l.Accept()
			if err != nil {
				os.Exit(1)
			}
			fmt.Fprintln(c, "ok")
			c.Close()
		}
	}
	if addr := os.Getenv("NETNS_TEST_BULK"); addr != "" {
		serveBulk(addr)
	}
	if addr := os.Getenv("NETNS_TEST_DIAL"); addr != "" {
		if !reachable(addr) {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// reachable reports whether addr answers "ok" within a second.
func reachable(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.TrimSpace(line) == "ok"
}

// TestTopology builds a 2-node network: the host reaches a server inside
// node1's namespace through the bridge, node2 reaches it from its own
// namespace, a cut link isolates node1 until it is healed, and Remove
// leaves no namespace, veth or bridge behind.
func TestTopology(t *testing.T) {
	if err := Check(); err != nil {
		testenv.Unavailable(t, "network namespaces", err, "run as root with iproute2 installed")
	}
	dir := owned(t)
	top, err := Create(dir, []string{"node1", "node2"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = top.Remove() })
	if len(top.Nodes) != 2 || !strings.HasPrefix(top.Subnet, "10.231.") || top.Address("node1") == top.Address("node2") {
		t.Fatalf("topology %+v", top)
	}
	addr := net.JoinHostPort(top.Address("node1"), "7070")
	srv, err := top.Wrap("node1", []string{os.Args[0]})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(srv[0], srv[1:]...)
	cmd.Env = append(os.Environ(), "NETNS_TEST_LISTEN="+addr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitFor := func(want bool, what string) {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); reachable(addr) != want; time.Sleep(100 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("%s: node1 reachable from the host is %t after 10 s", what, !want)
			}
		}
	}
	waitFor(true, "after start")
	fromNode2 := func() bool {
		dial, _ := top.Wrap("node2", []string{os.Args[0]})
		c := exec.Command(dial[0], dial[1:]...)
		c.Env = append(os.Environ(), "NETNS_TEST_DIAL="+addr)
		return c.Run() == nil
	}
	if !fromNode2() {
		t.Error("node2 does not reach node1 over the bridge")
	}
	// the server is in node1's namespace, not the host's
	if reachable(net.JoinHostPort("127.0.0.1", "7070")) {
		t.Error("the server listens on the host's loopback too")
	}
	if top.IsCut("node1") {
		t.Error("node1 cut before the cut")
	}
	if err := top.Cut("node1"); err != nil {
		t.Fatal(err)
	}
	if !top.IsCut("node1") || top.IsCut("node2") {
		t.Errorf("after cutting node1: node1 cut %t, node2 cut %t", top.IsCut("node1"), top.IsCut("node2"))
	}
	waitFor(false, "after the cut")
	if fromNode2() {
		t.Error("node2 still reaches node1 after the cut")
	}
	if err := top.Heal("node1"); err != nil {
		t.Fatal(err)
	}
	waitFor(true, "after healing")
	if !fromNode2() {
		t.Error("node2 does not reach node1 after healing")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if err := top.Remove(); err != nil {
		t.Fatal(err)
	}
	for _, n := range top.Nodes {
		if exists("netns", n.Namespace) || exists("link", n.HostVeth) {
			t.Errorf("%s left behind", n.Node)
		}
	}
	if exists("link", top.Bridge) {
		t.Errorf("bridge %s left behind", top.Bridge)
	}
}

// TestCleanStale removes the network of a cluster that no longer exists
// (a crashed scalelab's), and keeps one still claimed.
func TestCleanStale(t *testing.T) {
	if err := Check(); err != nil {
		testenv.Unavailable(t, "network namespaces", err, "run as root with iproute2 installed")
	}
	gone, err := Create(t.TempDir(), []string{"node1"})
	if err != nil {
		t.Fatal(err)
	}
	kept, err := Create(owned(t), []string{"node1"})
	if err != nil {
		_ = gone.Remove()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gone.Remove(); _ = kept.Remove() })
	removed, err := CleanStale(func(id string) bool { return id != gone.ID })
	if err != nil {
		t.Fatal(err)
	}
	if exists("netns", gone.Nodes[0].Namespace) || exists("link", gone.Bridge) || len(removed) < 2 {
		t.Errorf("stale network left: removed %v", removed)
	}
	if !exists("netns", kept.Nodes[0].Namespace) || !exists("link", kept.Bridge) {
		t.Errorf("claimed network removed: %v", removed)
	}
}

// owned is a state directory that looks like a live cluster's (it holds a
// cluster.json), so that a `cluster` command running meanwhile in another
// test does not take the test's network for a stale one.
func owned(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/cluster.json", []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}
