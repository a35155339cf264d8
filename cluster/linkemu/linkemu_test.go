package linkemu

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// echo serves lines back on a loopback port and returns its address.
func echo(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// TestProxyDelayAndStall runs the server process (this test binary), puts
// a proxy in front of an echo server and checks that a 40 ms delay each
// way adds about 80 ms to a round trip, that removing it takes it away,
// that a stalled proxy passes nothing until unstalled, and that the
// server exits when the cluster's state is removed.
func TestProxyDelayAndStall(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cluster.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	api := freePort(t)
	pid, err := Start(dir, api)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	c := Dial(api)
	listen := freePort(t)
	if err := c.Add("node1-client", listen, echo(t)); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	rtt := func() (time.Duration, error) {
		_ = conn.SetDeadline(time.Now().Add(time.Second))
		start := time.Now()
		if _, err := conn.Write([]byte("ping\n")); err != nil {
			return 0, err
		}
		if _, err := r.ReadString('\n'); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
	best := func() time.Duration {
		t.Helper()
		b := time.Hour
		for range 5 {
			d, err := rtt()
			if err != nil {
				t.Fatal(err)
			}
			b = min(b, d)
		}
		return b
	}
	base := best()
	if err := c.SetDelay("node1-client", Delay{Delay: 40 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if d := best(); d < 75*time.Millisecond || d > base+500*time.Millisecond {
		t.Errorf("round trip with 40 ms each way: %s (without: %s)", d, base)
	}
	ts, err := c.Toxics("node1-client")
	if err != nil || len(ts) != 2 {
		t.Errorf("toxics %v, %v", ts, err)
	}
	if err := c.SetDelay("node1-client", Delay{}); err != nil {
		t.Fatal(err)
	}
	if d := best(); d > 40*time.Millisecond {
		t.Errorf("round trip after the delay is removed: %s", d)
	}
	if err := c.Stall("node1-client"); err != nil {
		t.Fatal(err)
	}
	if _, err := rtt(); err == nil {
		t.Error("a stalled proxy passed data")
	}
	if err := c.Unstall("node1-client"); err != nil {
		t.Fatal(err)
	}
	conn2, err := net.Dial("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	conn, r = conn2, bufio.NewReader(conn2)
	if _, err := rtt(); err != nil {
		t.Errorf("after unstalling: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "cluster.json")); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); c.Up(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the server still runs 10 s after its cluster's state was removed")
		}
	}
}
