// Package readback holds the storage helpers scenarios share to read
// written items back by id for the acknowledged-write audit
// (scenario.ReadBacker, docs/audit.md).
package readback

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/scalelab/scalelab/engine/search"
)

// Doc names one document of a search engine.
type Doc struct {
	Index, ID, Routing string
}

// mgetDoc is one entry of an _mget request.
type mgetDoc struct {
	Index   string `json:"_index"`
	ID      string `json:"_id"`
	Routing string `json:"routing,omitempty"`
}

// SearchFound sets found[i] when docs[i] exists, with one real-time _mget
// (it sees every acknowledged write, refreshed or not; primaries or
// replicas that are in sync). A document of a missing index is absent;
// other per-document errors fail the call.
func SearchFound(ctx context.Context, c *search.Conn, docs []Doc, found []bool) error {
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
	status, data, err := c.Do(ctx, http.MethodPost, "/_mget", "_source=false&realtime=true", body)
	if err != nil {
		return fmt.Errorf("read back: %w", err)
	}
	if status >= 300 {
		return fmt.Errorf("read back: POST /_mget: HTTP %d: %.300s", status, data)
	}
	var resp struct {
		Docs []struct {
			ID    string `json:"_id"`
			Found bool   `json:"found"`
			Error *struct {
				Type   string `json:"type"`
				Reason string `json:"reason"`
			} `json:"error"`
		} `json:"docs"`
	}
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
