package search

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/scalelab/scalelab/metrics"
)

// The acknowledged-write audit's read-back (docs/audit.md) of documents by
// id, for the scenarios with their own storage.

// DocRef names one document.
type DocRef struct {
	Index, ID, Routing string
}

// mgetDoc is one entry of an _mget request.
type mgetDoc struct {
	Index   string `json:"_index"`
	ID      string `json:"_id"`
	Routing string `json:"routing,omitempty"`
}

// Found sets found[i] when docs[i] exists, with one real-time _mget
// (it sees every acknowledged write, refreshed or not; primaries or
// replicas that are in sync). A document of a missing index is absent;
// other per-document errors fail the call.
func (c *Conn) Found(ctx context.Context, docs []DocRef, found []bool) error {
	if len(docs) == 0 {
		return nil
	}
	req := struct {
		Docs []mgetDoc `json:"docs"`
	}{Docs: make([]mgetDoc, len(docs))}
	for i, d := range docs {
		req.Docs[i] = mgetDoc(d)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("read back: encode _mget: %w", err)
	}
	status, data, err := c.DoRead(ctx, http.MethodPost, "/_mget", "_source=false&realtime=true", body)
	if err != nil {
		return fmt.Errorf("read back: %w", err)
	}
	if status >= 300 {
		return fmt.Errorf("read back: POST /_mget: HTTP %d: %.300s", status, data)
	}
	var resp mgetResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		return fmt.Errorf("read back: decode _mget response: %w", err)
	}
	if len(resp.Docs) != len(docs) {
		return fmt.Errorf("read back: _mget answered %d documents for %d", len(resp.Docs), len(docs))
	}
	for i, d := range resp.Docs {
		if d.Error != nil {
			if d.Error.Type == "index_not_found_exception" {
				continue
			}
			return fmt.Errorf("read back %s/%s: %s: %s", docs[i].Index, docs[i].ID, d.Error.Type, d.Error.Reason)
		}
		found[i] = d.Found
	}
	return nil
}

// DoRead is Do for a read that is safe to repeat: a request a node refused
// (down, restarting) goes to the next nodes in turn, up to one try per
// node, so that the read-back after a node was killed still completes.
func (c *Conn) DoRead(ctx context.Context, method, path, query string, body []byte) (int, []byte, error) {
	var (
		status int
		data   []byte
		err    error
	)
	for range max(1, len(c.nodes)) {
		status, data, err = c.Do(ctx, method, path, query, body)
		if err == nil || metrics.ClassOf(err) != metrics.Refused || ctx.Err() != nil {
			break
		}
	}
	return status, data, err
}
