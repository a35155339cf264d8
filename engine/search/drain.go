package search

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/scalelab/scalelab/wait"
)

// writesPath lists the write tasks the cluster runs, with the indices each
// names in its description.
const writesPath = "/_tasks"

// waitWritesDone waits until the cluster runs no write to index, before
// the index is deleted and created again. A write an earlier client gave
// up on may still be held inside the cluster (likely a request between nodes cut
// off by a partition, delivered when the link heals, seconds after the
// client's run ended); applied after the new index is loaded, it would
// add a record that run never wrote. Bounded by <engine>.index_wait. A
// cluster that does not let this user list tasks, or has no task API, is
// not waited for.
func (c *Conn) waitWritesDone(ctx context.Context, index string) error {
	f := c.indexWait(fmt.Sprintf("the writes to index %s still running on the cluster to end", index), 200*time.Millisecond,
		"another client may be writing to it: stop it, or use another "+c.engine+"."+SetIndexPrefix)
	return f.Poll(ctx, func(ctx context.Context) (bool, string, error) {
		n, listed, err := c.WritesRunning(ctx, index)
		if err != nil {
			return false, "", wait.Retry(err) // a node that has not healed yet: ask again
		}
		if !listed {
			return true, "", nil
		}
		return n == 0, fmt.Sprintf("%d still running", n), nil
	})
}

// WritesRunning returns how many writes to index the cluster runs now,
// from its task list; listed is false where the cluster lists no tasks
// for this user (401 or 403) or has no task API (404).
func (c *Conn) WritesRunning(ctx context.Context, index string) (n int, listed bool, err error) {
	code, data, err := c.Do(ctx, http.MethodGet, writesPath, "actions=indices:data/write*&detailed=true", nil)
	if err != nil {
		return 0, false, err
	}
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		return 0, false, nil
	}
	if code >= 300 {
		return 0, false, newHTTPError(http.MethodGet, writesPath, code, data)
	}
	n, err = writesTo(data, index)
	return n, err == nil, err
}

// writesTo counts the tasks of a _tasks answer whose description names
// index: "requests[2], indices[logs]" of a bulk, "requests[1],
// index[logs][0]" of its shard requests.
func writesTo(data []byte, index string) (int, error) {
	var r struct {
		Nodes map[string]struct {
			Tasks map[string]struct {
				Description string `json:"description"`
			} `json:"tasks"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return 0, fmt.Errorf("decode the cluster's tasks: %w", err)
	}
	n := 0
	for _, node := range r.Nodes {
		for _, t := range node.Tasks {
			if namesIndex(t.Description, index) {
				n++
			}
		}
	}
	return n, nil
}

// namesIndex reports whether a write task's description names index:
// as one of a bulk's indices ("requests[2], indices[logs, other]") or as
// the index of a shard request ("requests[1], index[logs][0]", or
// "BulkShardRequest [[logs][0]] containing [1] requests").
func namesIndex(desc, index string) bool {
	for _, tok := range strings.FieldsFunc(desc, func(r rune) bool { return r == '[' || r == ']' || r == ',' || r == ' ' }) {
		if tok == index {
			return true
		}
	}
	return false
}
