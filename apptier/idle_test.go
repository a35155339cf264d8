package apptier

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/scalelab/scalelab/app"
	"github.com/scalelab/scalelab/cluster"
)

// TestWaitIdle: two real app servers, one busy with a request that its
// client gave up on and one with a request queued behind nothing: the
// cluster counts both, WaitIdle waits until the handler is done and
// announces a long wait; with a limit shorter than the work it returns
// the count left.
func TestWaitIdle(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release // work that does not look at its context (bcrypt)
		_, _ = io.WriteString(w, "done")
	})
	st := &cluster.State{Params: map[string]string{OptRequestTimeout: "2s"}}
	var servers []*app.Server
	for i := range 2 {
		srv := app.New(h, app.Config{MaxInFlight: 1, RequestTimeout: time.Minute})
		if err := srv.Listen("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		servers = append(servers, srv)
		host, port, _ := net.SplitHostPort(srv.Addr())
		p, _ := strconv.Atoi(port)
		st.Nodes = append(st.Nodes, cluster.Node{Name: "app" + strconv.Itoa(i+1), Role: RoleServer, Host: host, Port: p})
	}
	st.Nodes = append(st.Nodes, cluster.Node{Name: "lb", Role: RoleBalancer, Host: "127.0.0.1", Port: 1})
	if got := IdleWait(st); got != 12*time.Second {
		t.Errorf("IdleWait = %s, want the request timeout and 10 s", got)
	}
	ctx := context.Background()
	if n, err := InFlight(ctx, st); n != 0 || err != nil {
		t.Fatalf("idle cluster: %d, %v", n, err)
	}
	// a request whose client gives up at once, and two on the other server
	for i, srv := range []*app.Server{servers[0], servers[1], servers[1]} {
		rctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		go func() {
			req, _ := http.NewRequestWithContext(rctx, http.MethodGet, srv.URL()+"/work", nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		if i < 2 {
			<-started
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for servers[1].Queued() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n, err := InFlight(ctx, st); n < 2 || err != nil {
		t.Fatalf("busy cluster: %d in flight, %v; want at least the 2 handled", n, err)
	}
	if n, err := WaitIdle(ctx, st, 300*time.Millisecond, nil); n == 0 || err != nil {
		t.Errorf("a wait shorter than the work: %d left, %v", n, err)
	}
	go func() { time.Sleep(3500 * time.Millisecond); close(release) }()
	var told int64
	n, err := WaitIdle(ctx, st, 30*time.Second, func(n int64) { told = n })
	if n != 0 || err != nil {
		t.Errorf("WaitIdle after the work ended: %d left, %v", n, err)
	}
	if told == 0 {
		t.Error("a wait of over 3 s was not announced")
	}

	down := &cluster.State{Nodes: []cluster.Node{{Name: "app1", Role: RoleServer, Host: "127.0.0.1", Port: 1}}}
	if _, err := InFlight(ctx, down); err == nil {
		t.Error("a server that does not answer gave no error")
	}
}
