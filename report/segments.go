package report

import (
	"fmt"
	"strings"

	"github.com/scalelab/scalelab/results"
)

// segmentText describes a divided test: a segment's share, or what a
// merged result was built from.
func segmentText(r *results.Run) string {
	if s := r.Segment; s != nil && s.Count > 1 {
		t := fmt.Sprintf("segment %d of %d (0-based) on %s", s.Index, s.Count, s.Host)
		if s.StartAt != nil {
			t += fmt.Sprintf(", started %.1f ms after %s", s.StartLateMs, s.StartAt.Format("15:04:05"))
		}
		return t
	}
	m := r.Merged
	if m == nil {
		return ""
	}
	hosts := map[string]bool{}
	var late float64
	for _, s := range m.Shards {
		hosts[s.Host] = true
		late = max(late, s.StartLateMs)
	}
	var names []string
	for _, s := range m.Shards {
		if hosts[s.Host] {
			names = append(names, s.Host)
			delete(hosts, s.Host)
		}
	}
	t := fmt.Sprintf("merged from %d of %d segments on %s; the latest started %.1f ms after t = 0", len(m.Shards), m.Count, strings.Join(names, ", "), late)
	if len(m.Missing) > 0 || len(m.Failed) > 0 {
		t += fmt.Sprintf("; missing %v, failed %v", m.Missing, m.Failed)
	}
	return t
}
