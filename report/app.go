package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/scalelab/scalelab/results"
)

// appTier returns the run's app tier, nil without one.
func appTier(r *results.Run) *results.AppTier {
	for _, t := range r.Tiers {
		if t.App != nil {
			return t.App
		}
	}
	return nil
}

// appTable is the app tier's servers as the balancer counted them during
// the measured load; nil without an app tier.
func appTable(r *results.Run) *figTable {
	at := appTier(r)
	if at == nil {
		return nil
	}
	t := &figTable{Title: "App tier: requests per server (the balancer's counts)",
		Note: fmt.Sprintf("%s in front of %d servers of %s at %s, %s; %s. Requests are the responses each server gave through the balancer during the load (the frontend: %d, %s); downs count the times the balancer marked the server down. %s",
			at.Balancer, len(at.Servers), at.Scenario, at.URL, at.Algorithm, at.HealthCheck, at.Requests, classes(at.Responses), at.Note),
		Cols: []string{"server", "address", "requests", "share", "responses", "connection errors", "response errors", "redispatched", "downs", "status at the end"}}
	var total int64
	for _, s := range at.Servers {
		total += s.Requests
	}
	for _, s := range at.Servers {
		share := "-"
		if total > 0 {
			share = fmt.Sprintf("%.0f%%", 100*float64(s.Requests)/float64(total))
		}
		t.Rows = append(t.Rows, []string{s.Name, s.Address, fmt.Sprint(s.Requests), share, classes(s.Responses),
			fmt.Sprint(s.ConnErrors), fmt.Sprint(s.RespErrors), fmt.Sprint(s.Redispatches), fmt.Sprint(s.Downs), s.StatusEnd})
	}
	return t
}

// TerminalApp prints the app tier's requests per server, if the run had
// one.
func TerminalApp(w io.Writer, r *results.Run) {
	at := appTier(r)
	if at == nil {
		return
	}
	parts := make([]string, 0, len(at.Servers))
	for _, s := range at.Servers {
		p := fmt.Sprintf("%s %d", s.Name, s.Requests)
		if s.Downs > 0 || !strings.HasPrefix(s.StatusEnd, "UP") {
			p += fmt.Sprintf(" (marked down %d times, %s at the end)", s.Downs, s.StatusEnd)
		}
		parts = append(parts, p)
	}
	fmt.Fprintf(w, "app tier: %s requests through %s: %s\n", fmt.Sprint(at.Requests), at.Balancer, strings.Join(parts, ", "))
}
