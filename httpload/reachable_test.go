package httpload

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestReachable(t *testing.T) {
	t.Parallel()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer ok.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no server available", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	ctx := context.Background()
	if err := Reachable(ctx, ok.URL, "/healthz", 5*time.Second); err != nil {
		t.Errorf("a healthy app: %v", err)
	}
	start := time.Now()
	err = Reachable(ctx, closed, "/healthz", 5*time.Second)
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), closed+"/healthz") {
		t.Errorf("nothing listening: %v", err)
	}
	if time.Since(start) > 4*time.Second {
		t.Errorf("a refused connection took %s", time.Since(start))
	}
	err = Reachable(ctx, down.URL, "/healthz", 5*time.Second)
	if err == nil || errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "no server available") {
		t.Errorf("a 503: %v", err)
	}
}
