package app

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestLimitTimeoutAndShutdown: with one request at a time, a second
// request waits; one that cannot start within the request timeout gets
// 503; the health check answers beside the busy worker and is not
// counted; responses are counted by status; a graceful shutdown lets an
// in-flight request finish.
func TestLimitTimeoutAndShutdown(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		if r.URL.Path == "/hold" {
			<-release
		}
		w.Write([]byte("done"))
	})
	s := New(h, Config{MaxInFlight: 1, RequestTimeout: 300 * time.Millisecond})
	if err := s.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		resp, err := http.Get(s.URL() + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var wg sync.WaitGroup
	var holdCode int
	wg.Add(1)
	go func() { defer wg.Done(); holdCode, _ = get("/hold") }()
	<-started
	if code, body := get(HealthPath); code != http.StatusOK || body != "ok\n" {
		t.Errorf("health check beside a busy worker: %d %q, want 200 at once", code, body)
	}
	if code, body := get("/quick"); code != http.StatusServiceUnavailable {
		t.Errorf("a request behind a busy worker: %d %s, want 503 after the timeout", code, body)
	}
	// shut down while /hold is in flight: it finishes
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(context.Background()) }()
	time.Sleep(100 * time.Millisecond)
	close(release)
	wg.Wait()
	if err := <-done; err != nil {
		t.Errorf("shutdown: %v", err)
	}
	if holdCode != http.StatusOK {
		t.Errorf("the in-flight request ended %d", holdCode)
	}
	c := s.Codes()
	if c["200"] != 1 || c["503"] != 1 || s.Served() != 2 {
		t.Errorf("codes %v, served %d", c, s.Served())
	}
}
