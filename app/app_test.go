package app

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
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
	h := holdHandler(started, release)
	s := New(h, Config{MaxInFlight: 1, RequestTimeout: 300 * time.Millisecond})
	if err := s.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		code, body, _ := getFrom(http.DefaultClient, s.URL()+path)
		return code, body
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

// TestFullQueueAnswers503AtOnce: with one worker busy and the queue of 1
// taken, the next request is answered 503 without waiting (the request
// timeout is a minute, so a 503 within the client's 20 s can only be the
// full queue's), the queued request is served once the worker is free,
// and the shed request is counted.
func TestFullQueueAnswers503AtOnce(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	h := holdHandler(started, release)
	s := New(h, Config{MaxInFlight: 1, MaxQueue: 1, RequestTimeout: time.Minute})
	if err := s.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	client := &http.Client{Timeout: 20 * time.Second}
	get := func(path string) (int, string, http.Header) { return getFrom(client, s.URL()+path) }
	var wg sync.WaitGroup
	codes := make([]int, 2)
	wg.Add(2)
	go func() { defer wg.Done(); codes[0], _, _ = get("/hold") }()
	<-started
	go func() { defer wg.Done(); codes[1], _, _ = get("/queued") }()
	deadline := time.Now().Add(10 * time.Second)
	for s.waiting.Load() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the second request never queued")
		}
		time.Sleep(5 * time.Millisecond)
	}
	code, body, hdr := get("/third")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "1 queued") || hdr.Get("Retry-After") == "" {
		t.Errorf("a request behind a full queue: %d %q, want 503 at once with Retry-After", code, body)
	}
	close(release)
	wg.Wait()
	if codes[0] != http.StatusOK || codes[1] != http.StatusOK {
		t.Errorf("the request in progress and the queued one ended %v, want 200 200", codes)
	}
	if c := s.Codes(); c["200"] != 2 || c["503"] != 1 || s.Shed() != 1 {
		t.Errorf("codes %v, shed %d", c, s.Shed())
	}
}

// TestConfigCheck: a queue bound needs a worker bound; negatives are refused.
func TestConfigCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{MaxInFlight: 1, MaxQueue: 8}, ""},
		{Config{}, ""},
		{Config{MaxQueue: 8}, "needs a bound on the requests at once"},
		{Config{MaxInFlight: 1, MaxQueue: -1}, "must be 0 (unbounded) or more"},
	} {
		err := c.cfg.Check()
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}

// TestMetricsPath checks that an app server serves its process's CPU
// seconds and GOMAXPROCS for Prometheus, outside its request count.
func TestMetricsPath(t *testing.T) {
	s := New(http.NotFoundHandler(), Config{MaxInFlight: 1})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Start(l)
	defer s.Shutdown(context.Background())
	resp, err := http.Get(s.URL() + MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"process_cpu_seconds_total ", "process_resident_memory_bytes ", "go_sched_gomaxprocs_threads "} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s:\n%.600s", MetricsPath, want, b)
		}
	}
	if s.Served() != 0 {
		t.Errorf("served %d, want the metrics request uncounted", s.Served())
	}
}

// holdHandler answers "done", sending on started as each request begins
// and holding requests for /hold until release is closed.
func holdHandler(started chan<- struct{}, release <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		if r.URL.Path == "/hold" {
			<-release
		}
		w.Write([]byte("done"))
	})
}

// getFrom GETs url with c and returns the status, the body and the
// headers; a failed request gives status 0 and the error as the body.
func getFrom(c *http.Client, url string) (int, string, http.Header) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error(), nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}
