// Package app runs a scenario's backend as a real HTTP server (Go's
// net/http): a bound on the requests it works on at once (the study's app
// server threads; the others queue), a bound on that queue (a request
// that finds it full is answered 503 at once, as the study's servers shed
// load), a request timeout (a request still queued or running then gets
// 503), and a graceful shutdown in which in-flight requests finish. It
// counts the responses it gave by status.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Config is an app server's settings.
type Config struct {
	// MaxInFlight bounds the requests handled at once; 0: unbounded.
	MaxInFlight int
	// MaxQueue bounds the requests waiting for a worker when MaxInFlight
	// are being worked on: one more is answered 503 at once, without
	// waiting. 0: unbounded (a request waits up to RequestTimeout).
	MaxQueue int
	// RequestTimeout bounds a request's wait and work; 0: 30 s.
	RequestTimeout time.Duration
}

// Check says what is wrong with c's bounds.
func (c Config) Check() error {
	if c.MaxInFlight < 0 || c.MaxQueue < 0 {
		return fmt.Errorf("requests at once (%d) and the queue (%d) must be 0 (unbounded) or more", c.MaxInFlight, c.MaxQueue)
	}
	if c.MaxQueue > 0 && c.MaxInFlight == 0 {
		return fmt.Errorf("a bound on the queue (%d) needs a bound on the requests at once: with no bound nothing queues", c.MaxQueue)
	}
	return nil
}

// Server serves one handler.
type Server struct {
	cfg  Config
	h    http.Handler
	srv  *http.Server
	sem  chan struct{}
	addr string

	mu      sync.Mutex
	codes   map[int]int64
	served  atomic.Int64
	waiting atomic.Int64 // requests queued for a worker
	busy    atomic.Int64 // requests queued or being handled
	shed    atomic.Int64 // requests answered 503 because the queue was full
}

// New returns a server of h.
func New(h http.Handler, cfg Config) *Server {
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 30 * time.Second
	}
	s := &Server{cfg: cfg, h: h, codes: map[int]int64{}}
	if cfg.MaxInFlight > 0 {
		s.sem = make(chan struct{}, cfg.MaxInFlight)
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	return s
}

// Start serves on l in the background; Addr then says where.
func (s *Server) Start(l net.Listener) {
	s.addr = l.Addr().String()
	go func() { _ = s.srv.Serve(l) }()
}

// Listen listens on addr (host:port; port 0 picks one) and starts.
func (s *Server) Listen(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("app server: listen on %s: %w", addr, err)
	}
	s.Start(l)
	return nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.addr }

// URL is the server's base URL.
func (s *Server) URL() string { return "http://" + s.addr }

// Shutdown stops accepting, lets in-flight requests finish (until ctx
// ends) and closes.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		_ = s.srv.Close()
		return fmt.Errorf("app server: in-flight requests did not finish: %w", err)
	}
	return err
}

// statusWriter remembers the status code written.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// HealthPath is answered 200 by every app server, outside the bound on
// requests at once and without being counted: a balancer's health check
// asks whether the process serves, not whether it has a worker free.
const HealthPath = "/healthz"

// HeaderInFlight is the header of a HealthPath answer that counts the
// requests the server is handling or has queued at that moment (health
// checks and metrics not counted): zero once a run's requests are done,
// including those whose client has gone.
const HeaderInFlight = "X-In-Flight"

// MetricsPath serves the process's figures in Prometheus' text format
// (process_cpu_seconds_total, process_resident_memory_bytes,
// go_sched_gomaxprocs_threads and the Go runtime's), outside the bound on
// requests at once and without being counted, so that the team's
// Prometheus sees an app server's CPU beside its limit.
const MetricsPath = "/metrics"

// processMetrics is the handler of MetricsPath: this process's collectors.
var processMetrics = func() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}()

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == HealthPath {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set(HeaderInFlight, strconv.FormatInt(s.busy.Load(), 10))
		_, _ = io.WriteString(w, "ok\n")
		return
	}
	if r.URL.Path == MetricsPath {
		processMetrics.ServeHTTP(w, r)
		return
	}
	s.busy.Add(1)
	defer s.busy.Add(-1)
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		code := sw.code
		if code == 0 {
			code = http.StatusOK
		}
		s.served.Add(1)
		s.mu.Lock()
		s.codes[code]++
		s.mu.Unlock()
	}()
	if s.sem != nil {
		if !s.acquire(ctx, sw) {
			return
		}
		defer func() { <-s.sem }()
		if ctx.Err() != nil {
			// its client went, or its time ran out, while it waited: the
			// work is no one's any more
			http.Error(sw, "request abandoned while it waited for a worker", http.StatusServiceUnavailable)
			return
		}
	}
	s.h.ServeHTTP(sw, r.WithContext(ctx))
}

// acquire takes a worker: at once when one is free, else after a wait in
// the queue; a full queue (MaxQueue) is answered 503 at once, and so is a
// request that got no worker within the request timeout.
func (s *Server) acquire(ctx context.Context, w http.ResponseWriter) bool {
	select {
	case s.sem <- struct{}{}:
		return true
	default:
	}
	if n := s.waiting.Add(1); s.cfg.MaxQueue > 0 && n > int64(s.cfg.MaxQueue) {
		s.waiting.Add(-1)
		s.shed.Add(1)
		w.Header().Set("Retry-After", "1")
		http.Error(w, fmt.Sprintf("server busy: %d requests in progress and %d queued", s.cfg.MaxInFlight, s.cfg.MaxQueue), http.StatusServiceUnavailable)
		return false
	}
	defer s.waiting.Add(-1)
	select {
	case s.sem <- struct{}{}:
		return true
	case <-ctx.Done():
		http.Error(w, "server busy: no worker free within the request timeout", http.StatusServiceUnavailable)
		return false
	}
}

// InFlight is the number of requests queued or being handled now.
func (s *Server) InFlight() int64 { return s.busy.Load() }

// Queued is the number of requests waiting for a worker now.
func (s *Server) Queued() int64 { return s.waiting.Load() }

// Shed is the number of requests answered 503 because the queue was full.
func (s *Server) Shed() int64 { return s.shed.Load() }

// Codes returns the responses given so far by status code ("200": n).
func (s *Server) Codes() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int64, len(s.codes))
	keys := slices.Sorted(maps.Keys(s.codes))
	for _, k := range keys {
		out[strconv.Itoa(k)] = s.codes[k]
	}
	return out
}

// Served is the number of responses given.
func (s *Server) Served() int64 { return s.served.Load() }
