package liveexport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where the figures are served.
const Path = "/metrics"

// Server serves an exporter's figures for Prometheus to scrape.
type Server struct {
	srv     *http.Server
	addr    string
	scrapes atomic.Int64
	mu      sync.Mutex
	last    time.Time // the last scrape's time
	gap     time.Duration
}

// Registry is a registry of e alone.
func Registry(e *Exporter) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(e)
	return reg
}

// Serve listens on addr (host:port) and serves e's figures at Path.
func Serve(addr string, e *Exporter) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-listen %s: %w", addr, err)
	}
	s := &Server{addr: l.Addr().String()}
	h := promhttp.HandlerFor(Registry(e), promhttp.HandlerOpts{})
	mux := http.NewServeMux()
	mux.HandleFunc(Path, func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		s.scrapes.Add(1)
		s.mu.Lock()
		now := time.Now()
		if !s.last.IsZero() {
			s.gap = now.Sub(s.last)
		}
		s.last = now
		s.mu.Unlock()
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

// Addr is where the server listens.
func (s *Server) Addr() string { return s.addr }

// Scrapes is how many times the figures were read.
func (s *Server) Scrapes() int64 { return s.scrapes.Load() }

// Close waits, when the figures have been scraped at all, for one more
// scrape (so the run's final figures reach Prometheus), at most limit or
// twice the last gap between scrapes; say is told if that takes more
// than a few seconds. Then it stops serving.
func (s *Server) Close(limit time.Duration, say func(string)) error {
	s.mu.Lock()
	gap := s.gap
	s.mu.Unlock()
	if n := s.scrapes.Load(); n > 0 {
		wait := limit
		if gap > 0 {
			wait = min(limit, 2*gap+time.Second)
		}
		if wait > 3*time.Second {
			say(fmt.Sprintf("waiting up to %s for a last scrape of %s", wait.Round(time.Second), s.addr))
		}
		deadline := time.Now().Add(wait)
		for s.scrapes.Load() == n && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("stop --metrics-listen: %w", err)
	}
	return nil
}
