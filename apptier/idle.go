package apptier

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/scalelab/scalelab/app"
	"github.com/scalelab/scalelab/cluster"
)

// InFlight sums the requests an app cluster's servers are handling or
// have queued now, from each server's health answer (app.HeaderInFlight),
// asked directly rather than through the balancer.
func InFlight(ctx context.Context, st *cluster.State) (int64, error) {
	var sum int64
	client := &http.Client{Timeout: 5 * time.Second}
	for _, n := range st.Nodes {
		if n.Role != RoleServer {
			continue
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.ClientAddress()+app.HealthPath, nil)
		if err != nil {
			return 0, fmt.Errorf("app server %s: %w", n.Name, err)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, fmt.Errorf("app server %s: %w", n.Name, err)
		}
		resp.Body.Close()
		v, err := strconv.ParseInt(resp.Header.Get(app.HeaderInFlight), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("app server %s: its health answer has no %s count (%q)", n.Name, app.HeaderInFlight, resp.Header.Get(app.HeaderInFlight))
		}
		sum += v
	}
	return sum, nil
}

// IdleWait is the longest WaitIdle waits by default: a server's request
// timeout (after which a request still running gets 503) and a margin.
func IdleWait(st *cluster.State) time.Duration {
	d, err := time.ParseDuration(st.Params[OptRequestTimeout])
	if err != nil || d <= 0 {
		d = 30 * time.Second
	}
	return d + 10*time.Second
}

// WaitIdle waits until an app cluster's servers have no request in flight
// (a run's requests, those whose client has gone included, are done and
// wrote what they were going to write), for at most limit. announce is
// called once, with the count then, when the wait passes a few seconds.
// It returns the requests still in flight (0: idle) and an error when the
// servers cannot be asked or ctx ends.
func WaitIdle(ctx context.Context, st *cluster.State, limit time.Duration, announce func(n int64)) (int64, error) {
	start := time.Now()
	announced := false
	for {
		n, err := InFlight(ctx, st)
		if err != nil || n == 0 {
			return n, err
		}
		if time.Since(start) >= limit {
			return n, nil
		}
		if !announced && time.Since(start) >= 3*time.Second && announce != nil {
			announce(n)
			announced = true
		}
		select {
		case <-ctx.Done():
			return n, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
