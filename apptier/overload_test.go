package apptier

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scalelab/scalelab/app"
)

// TestOverloadAnswers503 runs real HAProxy, with the balancer's
// configuration, in front of one app server that works on one request
// at once and queues one more: with both taken, a request through the
// balancer is answered 503 by the server at once (its queue is full);
// once the server is gone and the health checks have marked it down, the
// balancer itself answers 503 (no server up), as the study's overloaded
// site did.
func TestOverloadAnswers503(t *testing.T) {
	bin := needHAProxy(t)
	release := make(chan struct{})
	started := make(chan struct{}, 8)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		if r.URL.Path == "/hold" {
			<-release
		}
		_, _ = io.WriteString(w, "done")
	})
	srv := app.New(h, app.Config{MaxInFlight: 1, MaxQueue: 1, RequestTimeout: time.Minute})
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lb := startTestBalancer(ctx, t, bin, srv.Addr())
	listen := lb.listen

	client := &http.Client{Timeout: 20 * time.Second}
	base := "http://" + listen
	get := func(path string) (int, string) {
		resp, err := client.Get(base + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var wg sync.WaitGroup
	codes := make([]int, 2)
	wg.Add(2)
	go func() { defer wg.Done(); codes[0], _ = get("/hold") }()
	<-started
	go func() { defer wg.Done(); codes[1], _ = get("/queued") }()
	// the queued request is not started until the held one ends
	waitFor(t, "the second request to reach the server's queue", func() bool {
		select {
		case <-started:
			t.Error("the second request started beside the held one")
			return true
		default:
		}
		return srv.Served() == 0 && srv.Queued() == 1
	})
	// the request timeout is a minute: a 503 within the client's 20 s
	// is the full queue's
	if code, body := get("/third"); code != http.StatusServiceUnavailable || !strings.Contains(body, "queued") {
		t.Errorf("through the balancer behind a full queue: %d %q, want the server's 503", code, body)
	}
	free()
	wg.Wait()
	if codes[0] != http.StatusOK || codes[1] != http.StatusOK {
		t.Errorf("held and queued requests ended %v, want 200 200", codes)
	}

	// no server up: the balancer answers 503 itself
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the balancer to mark app1 down", func() bool { return strings.HasPrefix(lb.status(ctx), "DOWN") })
	code, body := get("/page")
	if code != http.StatusServiceUnavailable || strings.Contains(body, "queued") {
		t.Errorf("through the balancer with no server up: %d %q, want the balancer's 503", code, body)
	}
	if c := srv.Codes(); c["503"] != 1 || c["200"] != 2 {
		t.Errorf("the server's responses %v, want 200 x2 and the one 503 of its full queue", c)
	}
}
