package apptier

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/scalelab/scalelab/app"
)

// TestAbandonedRequestsEnd runs real HAProxy, with the balancer's
// configuration, in front of one app server that works on one request at
// once: when the load generator gives up on its requests (a run ends), the
// server's request in progress sees its context end and the request queued
// behind it does not run to its end either, so that no work of a finished
// run reaches the store after the next run has reset it.
func TestAbandonedRequestsEnd(t *testing.T) {
	bin := needHAProxy(t)
	started := make(chan string, 8)
	ended := make(chan error, 8)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- r.URL.Path
		select {
		case <-r.Context().Done():
			ended <- r.Context().Err()
		case <-time.After(20 * time.Second):
			ended <- nil
		}
	})
	srv := app.New(h, app.Config{MaxInFlight: 1, RequestTimeout: time.Minute})
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	listen := startTestBalancer(ctx, t, bin, srv.Addr()).listen

	reqCtx, abandon := context.WithCancel(ctx)
	get := func(p string) {
		req, _ := http.NewRequestWithContext(reqCtx, http.MethodGet, "http://"+listen+p, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	go get("/held")
	if p := <-started; p != "/held" {
		t.Fatalf("first request handled: %s", p)
	}
	go get("/queued")
	waitFor(t, "the second request to reach the server's queue", func() bool { return srv.Queued() > 0 })
	abandon()
	select {
	case err := <-ended:
		if err == nil {
			t.Fatal("the request in progress ran to its end after its client had gone")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the request in progress did not see its client go within 10 s")
	}
	// the queued request is not handled, or, if it took the worker before
	// the server saw its client go, ends with its client as well
	select {
	case err := <-ended:
		if err == nil {
			t.Error("the queued request ran to its end after its client had gone")
		}
	case <-time.After(2 * time.Second):
	}
}
