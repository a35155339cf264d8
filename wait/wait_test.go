package wait

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuf is a bytes.Buffer safe for the announcer and the test to share.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// httpCheck asks url for its health as a health check of a server does.
func httpCheck(url string) Check {
	return func(ctx context.Context) (bool, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, "", err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, "", Retry(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK, strings.TrimSpace(string(b)), nil
	}
}

func TestPollNeverReadyAnnouncesAndEndsAtBound(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "building")
	}))
	defer srv.Close()
	var out syncBuf
	ctx := WithOutput(context.Background(), &out)
	f := For{What: "index logs_ts on node3", Bound: 1500 * time.Millisecond, Setting: "cassandra.index_wait",
		Hint: "raise cassandra.index_wait or look at node3's log", Every: 50 * time.Millisecond,
		Announce: 300 * time.Millisecond, Repeat: 400 * time.Millisecond}
	start := time.Now()
	err := f.Poll(ctx, httpCheck(srv.URL))
	took := time.Since(start)
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("Poll = %v, want a *TimeoutError", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the error is not a DeadlineExceeded: %v", err)
	}
	if took < f.Bound || took > f.Bound+5*time.Second {
		t.Errorf("Poll took %s, bound %s", took, f.Bound)
	}
	for _, want := range []string{"index logs_ts on node3: not ready after", "(building)", "cassandra.index_wait (2s)", "look at node3's log"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 2 {
		t.Fatalf("want a first message and at least one repeat, got %q", out.String())
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "waiting for index logs_ts on node3: building, ") || !strings.HasSuffix(l, " s (up to 2s, cassandra.index_wait)") {
			t.Errorf("message %q", l)
		}
	}
}

func TestPollReadyIsQuiet(t *testing.T) {
	t.Parallel()
	var n int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		n++
		if n < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	var out syncBuf
	ctx := WithOutput(context.Background(), &out)
	f := For{What: "server", Bound: 10 * time.Second, Every: 10 * time.Millisecond}
	if err := f.Poll(ctx, httpCheck(srv.URL)); err != nil {
		t.Fatal(err)
	}
	if out.String() != "" {
		t.Errorf("a wait shorter than the announcement printed %q", out.String())
	}
}

func TestPollFailsAtOnceOnError(t *testing.T) {
	t.Parallel()
	boom := errors.New("permission denied")
	f := For{What: "replica r1", Bound: time.Minute}
	err := f.Poll(context.Background(), func(context.Context) (bool, string, error) { return false, "", boom })
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "waiting for replica r1") {
		t.Errorf("Poll = %v", err)
	}
	var te *TimeoutError
	if errors.As(err, &te) {
		t.Errorf("an error of the check is no timeout: %v", err)
	}
	f.Hint = "see the replica's log"
	err = f.Poll(context.Background(), func(context.Context) (bool, string, error) { return false, "", boom })
	if !errors.Is(err, boom) || !strings.HasSuffix(err.Error(), "permission denied; see the replica's log") {
		t.Errorf("Poll with a hint = %v", err)
	}
}

func TestPollCancelledIsNoTimeout(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	f := For{What: "x", Bound: time.Minute, Every: 10 * time.Millisecond}
	err := f.Poll(ctx, func(context.Context) (bool, string, error) { return false, "", nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Poll = %v, want context.Canceled", err)
	}
}

func TestPollUsesCtxDeadlineWhenUnbounded(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	f := For{What: "cluster c1", Setting: "--timeout", Every: 10 * time.Millisecond}
	err := f.Poll(ctx, func(context.Context) (bool, string, error) { return false, "red", nil })
	var te *TimeoutError
	if !errors.As(err, &te) || te.State != "red" || te.Bound <= 0 || te.Bound > 200*time.Millisecond {
		t.Fatalf("Poll = %#v", err)
	}
}

func TestDoAnnouncesABlockingCall(t *testing.T) {
	t.Parallel()
	var out syncBuf
	ctx := WithOutput(context.Background(), &out)
	f := For{What: "schema agreement", Bound: 2500 * time.Millisecond, Setting: "cassandra.schema_wait", Announce: time.Millisecond}
	err := f.Do(ctx, func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("Do = %v", err)
	}
	if !strings.Contains(out.String(), "waiting for schema agreement, 1 s (up to 3s, cassandra.schema_wait)") {
		t.Errorf("output %q", out.String())
	}
	if err := f.Do(ctx, func(context.Context) error { return nil }); err != nil {
		t.Errorf("Do = %v", err)
	}
}
