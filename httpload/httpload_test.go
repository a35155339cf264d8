package httpload

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/metrics"
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
	if got := Codes(c.ByOp("form_post")); got != "303 x1, 403 x1" {
		t.Errorf("form_post codes %q", got)
	}
	if got := Codes(c.ByOp("slow")); got != "timeout x1" {
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
