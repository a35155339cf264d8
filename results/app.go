package results

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// AppTier is a run's app tier (a tier of role "app"): the web scenario's
// servers behind the balancer, and what the balancer counted for each
// during the measured load.
type AppTier struct {
	URL       string `json:"url"`       // the balancer's, which the load generator drove
	Scenario  string `json:"scenario"`  // the backend the servers run
	Balancer  string `json:"balancer"`  // "HAProxy 2.6.12"
	Algorithm string `json:"algorithm"` // roundrobin, leastconn
	// HealthCheck says how the balancer checks servers.
	HealthCheck string      `json:"health_check"`
	Servers     []AppServer `json:"servers"`
	// Requests is the responses the balancer's frontend gave, by class.
	Requests  int64            `json:"requests"`
	Responses map[string]int64 `json:"responses,omitempty"`
	// Note says why counts are missing (stats unreadable), "" otherwise.
	Note string `json:"note,omitempty"`
}

// AppServer is one app server as the balancer saw it during the run.
type AppServer struct {
	Name     string `json:"name"`
	Address  string `json:"address"`
	Requests int64  `json:"requests"` // responses it gave through the balancer
	// Responses by class (2xx, 5xx, ...).
	Responses map[string]int64 `json:"responses,omitempty"`
	// ConnErrors are connections to it that failed; RespErrors responses
	// cut or refused; Redispatches requests moved to another server.
	ConnErrors   int64 `json:"conn_errors"`
	RespErrors   int64 `json:"resp_errors"`
	Redispatches int64 `json:"redispatches"`
	// Downs counts the balancer marking it down during the run.
	Downs int64 `json:"downs"`
	// StatusEnd is the balancer's status of it when the load ended.
	StatusEnd string `json:"status_end"`
}

// ResponseCounts prints responses counted by status for people, statuses
// in order: "200 x12, 303 x4".
func ResponseCounts(m map[string]int64) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s x%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
