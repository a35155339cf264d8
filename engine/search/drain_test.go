package search

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/scalelab/scalelab/wait"
)

// TestWritesTo: the write tasks of a _tasks answer that name the index,
// by its bulks' indices or its shard requests, are counted; those of
// other indices are not.
func TestWritesTo(t *testing.T) {
	t.Parallel()
	answer := []byte(`{"nodes":{
	  "n1":{"name":"node1","tasks":{
	    "n1:10":{"action":"indices:data/write/bulk","description":"requests[2], indices[logs, other]"},
	    "n1:11":{"action":"indices:data/write/bulk[s]","description":"requests[1], index[logs][0]"},
	    "n1:12":{"action":"indices:data/write/bulk[s][p]","description":"BulkShardRequest [[logs][2]] containing [1] requests"},
	    "n1:13":{"action":"indices:data/write/bulk","description":"requests[5], indices[logs-old]"}}},
	  "n2":{"name":"node2","tasks":{
	    "n2:7":{"action":"indices:data/write/bulk[s][r]","description":"requests[1], index[other][1]"}}}}}`)
	for _, tc := range []struct {
		index string
		want  int
	}{{"logs", 3}, {"other", 2}, {"logs-old", 1}, {"users", 0}} {
		if n, err := writesTo(answer, tc.index); err != nil || n != tc.want {
			t.Errorf("writes to %s: %d, %v; want %d", tc.index, n, err, tc.want)
		}
	}
	if n, err := writesTo([]byte(`{"nodes":{}}`), "logs"); err != nil || n != 0 {
		t.Errorf("no tasks: %d, %v", n, err)
	}
	if _, err := writesTo([]byte(`<html>`), "logs"); err == nil {
		t.Error("an answer that is not JSON was read")
	}
}

// TestCreateIndexWaitsForWrites: an index is deleted and created again
// only once no write to it runs on the cluster; writes that never end
// fail the creation at <engine>.index_wait, saying what it waited for,
// without deleting the index.
func TestCreateIndexWaitsForWrites(t *testing.T) {
	t.Parallel()
	for _, never := range []bool{false, true} {
		var polls atomic.Int64
		f := newFake(t, "opensearch", func(w http.ResponseWriter, r *http.Request) bool {
			switch {
			case r.URL.Path == "/_tasks":
				if n := polls.Add(1); never || n <= 3 {
					fmt.Fprint(w, `{"nodes":{"n1":{"tasks":{"n1:1":{"description":"requests[1], index[logs][0]"}}}}}`)
				} else {
					fmt.Fprint(w, `{"nodes":{"n1":{"tasks":{"n1:2":{"description":"requests[1], index[other][0]"}}}}}`)
				}
			case r.URL.Path == "/logs" && (r.Method == http.MethodDelete || r.Method == http.MethodPut):
				if r.Method == http.MethodDelete && polls.Load() <= 3 {
					t.Errorf("the index was deleted while a write to it ran")
				}
				fmt.Fprint(w, `{"acknowledged":true}`)
			case r.URL.Path == "/_cluster/health/logs":
				fmt.Fprint(w, `{"status":"green"}`)
			default:
				return false
			}
			return true
		})
		c := mustOpen(t, OpenSearch, f.URL, "opensearch.index_wait=2s")
		err := c.CreateIndex(context.Background(), "logs", nil, nil)
		var te *wait.TimeoutError
		switch {
		case !never && err != nil:
			t.Errorf("writes that ended: CreateIndex = %v", err)
		case never && (!errors.As(err, &te) || !strings.Contains(err.Error(), "writes to index logs") || !strings.Contains(err.Error(), "1 still running")):
			t.Errorf("writes that never end: CreateIndex = %v, want a bounded wait's error naming them", err)
		case never && f.count("DELETE /logs") != 0:
			t.Errorf("the index was deleted after a failed wait")
		}
	}
}
