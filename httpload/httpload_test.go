package httpload

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
)

// TestUserCookiesTokensAndCodes: a user keeps the cookie a page set and
// sends it back, captures the form's token, does not follow a post's
// redirect, and every response is counted by operation and status; an
// unexpected status is an error of the right class.
func TestUserCookiesTokensAndCodes(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /form", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "s", Value: "abc", Path: "/"})
		w.Write([]byte(`<form><input type="hidden" name="csrf_token" value="tok123"></form>`))
	})
	mux.HandleFunc("POST /form", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("s")
		if err != nil || c.Value != "abc" || r.PostFormValue("csrf_token") != "tok123" {
			http.Error(w, "no", http.StatusForbidden)
			return
		}
		http.Redirect(w, r, "/done", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /busy", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "busy", http.StatusServiceUnavailable) })
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) { time.Sleep(300 * time.Millisecond) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	c := NewCounter()
	u := NewUser(srv.URL, c, 100*time.Millisecond)
	defer u.Close()
	ctx := context.Background()
	p, err := u.Get(ctx, "form_page", "/form")
	if err != nil || p.Token("csrf_token") != "tok123" || p.Token("other") != "" {
		t.Fatalf("page %+v, %v", p, err)
	}
	if _, err := u.Post(ctx, "form_post", "/form", url.Values{"csrf_token": {p.Token("csrf_token")}}, nil); err != nil {
		t.Errorf("post with cookie and token: %v", err)
	}
	other := NewUser(srv.URL, c, time.Second) // its own jar: no cookie
	defer other.Close()
	_, err = other.Post(ctx, "form_post", "/form", url.Values{"csrf_token": {"tok123"}}, nil)
	var se *StatusError
	if !errors.As(err, &se) || se.Code != http.StatusForbidden || metrics.ClassOf(err) != metrics.Rejected {
		t.Errorf("post without the cookie: %v (class %s)", err, metrics.ClassOf(err))
	}
	if _, err := u.Get(ctx, "busy", "/busy"); metrics.ClassOf(err) != metrics.Rejected || !strings.Contains(err.Error(), "status 503") {
		t.Errorf("503: %v", err)
	}
	if _, err := u.Get(ctx, "slow", "/slow"); metrics.ClassOf(err) != metrics.Timeout {
		t.Errorf("timeout: %v (class %s)", err, metrics.ClassOf(err))
	}
	if got := results.ResponseCounts(c.ByOp("form_post")); got != "303 x1, 403 x1" {
		t.Errorf("form_post codes %q", got)
	}
	if got := results.ResponseCounts(c.ByOp("slow")); got != "timeout x1" {
		t.Errorf("slow codes %q", got)
	}
	secs, _ := c.Report()["per_second"].([]Second)
	var total int64
	for _, s := range secs {
		for _, n := range s.Codes {
			total += n
		}
	}
	if total != 5 {
		t.Errorf("per-second counts add up to %d, want 5", total)
	}
	if _, err := Base("ftp://x"); err == nil {
		t.Error("ftp URL accepted")
	}
	if b, err := Base("http://127.0.0.1:8080/"); err != nil || b != "http://127.0.0.1:8080" {
		t.Errorf("Base: %q %v", b, err)
	}
}

func TestConditionalGet(t *testing.T) {
	version := "v1"
	var conditional int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		etag := `W/"` + version + `"`
		if r.Header.Get("If-None-Match") != "" {
			conditional++
		}
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		fmt.Fprintf(w, "page %s", version)
	}))
	defer srv.Close()
	c := NewCounter()
	u := NewUser(srv.URL, c, 5*time.Second)
	defer u.Close()
	ctx := context.Background()
	for i, want := range []struct {
		code int
		body string
	}{{200, "page v1"}, {304, "page v1"}, {304, "page v1"}} {
		p, err := u.Get(ctx, "page", "/p?x=1")
		if err != nil || p.Code != want.code || p.Body != want.body || !p.Shown() {
			t.Fatalf("get %d: %+v, %v; want %d %q", i, p, err, want.code, want.body)
		}
	}
	version = "v2"
	p, err := u.Get(ctx, "page", "/p?x=1")
	if err != nil || p.Code != 200 || p.Body != "page v2" {
		t.Fatalf("after a change: %+v, %v", p, err)
	}
	if conditional != 3 {
		t.Fatalf("%d conditional requests, want 3", conditional)
	}
	// another user has a cache of its own
	p, err = NewUser(srv.URL, c, 5*time.Second).Get(ctx, "page", "/p?x=1")
	if err != nil || p.Code != 200 {
		t.Fatalf("another user: %+v, %v", p, err)
	}
	// a 304 is not a 403: a check that expects a refusal fails on it
	version = "v2"
	if p, err := u.Get(ctx, "page", "/p?x=1", http.StatusForbidden); err == nil || !p.Shown() {
		t.Fatalf("a 304 met a 403 expectation: %+v, %v", p, err)
	}
	if got := c.ByOp("page")["304"]; got != 3 {
		t.Fatalf("304s counted %d, want 3", got)
	}
}
