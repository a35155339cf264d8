package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOneServer(t *testing.T) {
	st := &State{Name: "one", Dir: t.TempDir(), Params: map[string]string{}}
	answering := true
	s := OneServer{Engine: "kv", Binary: "kv-server", BinaryEnv: "SCALELAB_KV_SERVER", Package: "kv-server", NotFound: errors.New("kv-server not found"),
		Answers: func(context.Context, *State, string) error {
			if !answering {
				return errors.New("no answer")
			}
			return nil
		},
		Facts: func(context.Context, *State, string) (map[string]string, error) {
			return map[string]string{"version": "1.0", "noise": "x"}, nil
		},
		FactKeys: []string{"version"},
	}
	node, err := s.Node(st)
	if err != nil {
		t.Fatal(err)
	}
	if node.Name != "node1" || node.Host != Loopback || node.Port == 0 || node.Ports["kv"] != node.Port || node.DataDir != filepath.Join(st.Dir, "node1") {
		t.Errorf("node %+v", node)
	}
	if err := os.Mkdir(node.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	node.Cmd = []string{"sleep", "60"}
	if err := s.Start(context.Background(), st, node, func(addr string) string { return "kv://" + addr }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = StopAll(st, time.Second) })
	if len(st.Nodes) != 1 || st.Nodes[0].PID == 0 || st.Target != "kv://"+node.ClientAddress() {
		t.Fatalf("state after start: %+v", st)
	}
	if ns, _ := s.Status(context.Background(), st); len(ns) != 1 || !ns[0].Alive || ns[0].Detail["version"] != "1.0" || ns[0].Detail["noise"] != "" {
		t.Errorf("status %+v", ns)
	}
	if h, _ := s.Health(context.Background(), st); h.Status != Green || h.Nodes != 1 {
		t.Errorf("answering: %s", h)
	}
	answering = false
	if h, _ := s.Health(context.Background(), st); h.Status != Red || h.Detail["node1"] != "not answering" {
		t.Errorf("not answering: %s", h)
	}
	if err := StopAll(st, time.Second); err != nil {
		t.Fatal(err)
	}
	if h, _ := s.Health(context.Background(), st); h.Status != Unreachable || h.Detail["node1"] != "down" {
		t.Errorf("stopped: %s", h)
	}
	t.Setenv("SCALELAB_KV_SERVER", "")
	if _, err := s.FindBinary(); !errors.Is(err, s.NotFound) || !containsAll(err.Error(), "apt-get install -y kv-server", "SCALELAB_KV_SERVER") {
		t.Errorf("missing binary: %v", err)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
