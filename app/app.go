// Package app runs a scenario's backend as a real HTTP server (Go's
// net/http): a bound on the requests it works on at once (the study's app
// server threads; the others queue), a request timeout (a request still
// queued or running then gets 503), and a graceful shutdown in which
// in-flight requests finish. It counts the responses it gave by status.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Config is an app server's settings.
type Config struct {
	// MaxInFlight bounds the requests handled at once; 0: unbounded.
	MaxInFlight int
	// RequestTimeout bounds a request's wait and work; 0: 30 s.
	RequestTimeout time.Duration
}

// Server serves one handler.
type Server struct {
	cfg  Config
	h    http.Handler
	srv  *http.Server
	sem  chan struct{}
	addr string

	mu     sync.Mutex
	codes  map[int]int64
	served atomic.Int64
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

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == HealthPath {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "ok\n")
		return
	}
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
		select {
		case s.sem <- struct{}{}:
			defer func() { <-s.sem }()
		case <-ctx.Done():
			http.Error(sw, "server busy: no worker free within the request timeout", http.StatusServiceUnavailable)
			return
		}
	}
	s.h.ServeHTTP(sw, r.WithContext(ctx))
}

// Codes returns the responses given so far by status code ("200": n).
func (s *Server) Codes() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int64, len(s.codes))
	keys := make([]int, 0, len(s.codes))
	for k := range s.codes {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		out[strconv.Itoa(k)] = s.codes[k]
	}
	return out
}

// Served is the number of responses given.
func (s *Server) Served() int64 { return s.served.Load() }
