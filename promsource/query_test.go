package promsource

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBearerToken: the token goes in the Authorization header of every
// request and nowhere in an error.
func TestBearerToken(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		if got != "Bearer tok-123" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"success","data":{"resultType":"scalar","result":[1,"1"]}}`))
	}))
	defer srv.Close()
	t.Setenv(TokenEnv, "tok-123")
	m, err := Plan("prometheus="+srv.URL, []string{`store=job="a"`})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Check(context.Background()); err != nil || got != "Bearer tok-123" {
		t.Fatalf("check: %v, header %q", err, got)
	}
	t.Setenv(TokenEnv, "wrong-secret")
	c, _ = NewClient(m)
	err = c.Check(context.Background())
	if err == nil || strings.Contains(err.Error(), "wrong-secret") || !strings.Contains(err.Error(), "does not answer") {
		t.Errorf("with a bad token: %v", err)
	}
}
