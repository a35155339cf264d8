package netns

import (
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/internal/testenv"
)

// bulkBytes is what a NETNS_TEST_BULK server sends.
const bulkBytes = 500_000

// serveBulk sends bulkBytes to every connection, forever.
func serveBulk(addr string) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		os.Exit(1)
	}
	buf := make([]byte, bulkBytes)
	for {
		c, err := l.Accept()
		if err != nil {
			os.Exit(1)
		}
		go func() { _, _ = c.Write(buf); c.Close() }()
	}
}

// startIn runs the test binary as a server inside the node's namespace.
func startIn(t *testing.T, top *Topology, node, env string) {
	t.Helper()
	srv, err := top.Wrap(node, []string{os.Args[0]})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(srv[0], srv[1:]...)
	cmd.Env = append(os.Environ(), env)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
}

// TestShape checks the kernel's link shaping on a 3-node network: a
// partition between groups cuts node1 from node2 only (node3 and the host
// still reach it) until joined; 100 % loss makes node1 unreachable and 0 %
// gives it back; a rate limit slows a 500 kB transfer to about what the
// rate allows, and lifting it makes it fast again.
func TestShape(t *testing.T) {
	if err := Check(); err != nil {
		testenv.Unavailable(t, "network namespaces", err, "run as root with iproute2 installed")
	}
	if err := CheckNft(); err != nil {
		testenv.Unavailable(t, "nftables", err, "apt-get install nftables")
	}
	top, err := Create(owned(t), []string{"node1", "node2", "node3"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = top.Remove() })
	addr := net.JoinHostPort(top.Address("node1"), "7070")
	bulk := net.JoinHostPort(top.Address("node1"), "7071")
	startIn(t, top, "node1", "NETNS_TEST_LISTEN="+addr)
	startIn(t, top, "node1", "NETNS_TEST_BULK="+bulk)
	from := func(node string) bool {
		dial, _ := top.Wrap(node, []string{os.Args[0]})
		c := exec.Command(dial[0], dial[1:]...)
		c.Env = append(os.Environ(), "NETNS_TEST_DIAL="+addr)
		return c.Run() == nil
	}
	for end := time.Now().Add(10 * time.Second); !reachable(addr); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("node1's server does not answer")
		}
	}
	if err := top.Separate([]string{"node1"}, []string{"node2"}); err != nil {
		t.Fatal(err)
	}
	if !top.Separated("node1") || !top.Separated("node2") || top.Separated("node3") {
		t.Errorf("separated: node1 %t node2 %t node3 %t", top.Separated("node1"), top.Separated("node2"), top.Separated("node3"))
	}
	if from("node2") {
		t.Error("node2 reaches node1 across the partition")
	}
	if !from("node3") || !reachable(addr) {
		t.Errorf("outside the partition: node3 reaches node1 %t, the host %t", from("node3"), reachable(addr))
	}
	if err := top.Join([]string{"node1", "node2"}); err != nil {
		t.Fatal(err)
	}
	if !from("node2") || top.Separated("node1") {
		t.Error("node2 does not reach node1 after the partition is joined")
	}

	if err := top.SetLoss("node1", 100); err != nil {
		t.Fatal(err)
	}
	if reachable(addr) {
		t.Error("node1 reachable with 100 % loss")
	}
	if err := top.SetLoss("node1", 12.5); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command("ip", "netns", "exec", top.Nodes[0].Namespace, "nft", "list", "chain", "inet", nftTable, "loss_out").Output()
	if !strings.Contains(string(out), "mod 10000 < 1250 drop") {
		t.Errorf("12.5 %% loss rule: %s", out)
	}
	if err := top.SetLoss("node1", 0); err != nil {
		t.Fatal(err)
	}
	if !reachable(addr) {
		t.Error("node1 unreachable after the loss is removed")
	}
	if err := top.SetLoss("node1", 101); err == nil {
		t.Error("101 % loss accepted")
	}

	fetch := func() time.Duration {
		t.Helper()
		start := time.Now()
		c, err := net.DialTimeout("tcp", bulk, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		n, err := io.Copy(io.Discard, c)
		if err != nil || n != bulkBytes {
			t.Fatalf("transfer: %d bytes, %v", n, err)
		}
		return time.Since(start)
	}
	// 2 Mbit/s: 500 kB take 2 s (the burst lets about 25 kB through at once)
	if err := top.SetRate("node1", 2000); err != nil {
		t.Fatal(err)
	}
	if d := fetch(); d < time.Second {
		t.Errorf("500 kB at 2 Mbit/s took %s", d)
	}
	if err := top.SetRate("node1", 0); err != nil {
		t.Fatal(err)
	}
	if d := fetch(); d > time.Second {
		t.Errorf("500 kB without a rate limit took %s", d)
	}
	if err := top.SetRate("node1", 0); err != nil {
		t.Errorf("removing no limit: %v", err)
	}
}
