package search

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/metrics"
)

// Every index scalelab creates carries its mark in its mapping's _meta
// ({"created_by": "<mark>"}), read back from GET /<index>/_mapping. Before
// a run deletes, recreates or writes into an index it checks the mark
// (Claim): an index of the name, or matching the pattern, without it is a
// user's, and the run is refused with an engine.NotOwnedError unless
// <engine>.replace_existing is set. A pattern (mhealth's "mh-*") is
// resolved to its indices and each is checked, so that a delete by
// pattern never removes an index scalelab did not create.

// metaKey is the key of the mark in an index mapping's _meta.
const metaKey = "created_by"

// markMappings returns mappings (a JSON object, or empty) with the
// connection's mark as _meta.created_by.
func (c *Conn) markMappings(mappings json.RawMessage) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(mappings) > 0 {
		if err := json.Unmarshal(mappings, &m); err != nil {
			return nil, fmt.Errorf("mappings: %w", err)
		}
	}
	mark := c.opts.Mark
	if mark == "" {
		mark = engine.Mark("", "")
	}
	meta, err := json.Marshal(map[string]string{metaKey: mark})
	if err != nil {
		return nil, err
	}
	m["_meta"] = meta
	return json.Marshal(m)
}

// Indices resolves pattern (a name, a comma-separated list or a wildcard)
// to the indices it names, open or closed, sorted, and reports which of
// them carry no scalelab mark. None existing is no error.
func (c *Conn) Indices(ctx context.Context, pattern string) (names, foreign []string, err error) {
	path := "/" + pattern + "/_mapping"
	status, data, err := c.Do(ctx, http.MethodGet, path, "ignore_unavailable=true&allow_no_indices=true&expand_wildcards=open,closed", nil)
	if err != nil {
		return nil, nil, fmt.Errorf("read the mappings of %s: %w", pattern, err)
	}
	if status == http.StatusNotFound {
		return nil, nil, nil
	}
	if status >= 300 {
		return nil, nil, fmt.Errorf("read the mappings of %s: %w", pattern, newHTTPError(http.MethodGet, path, status, data))
	}
	var resp map[string]struct {
		Mappings struct {
			Meta map[string]any `json:"_meta"`
		} `json:"mappings"`
	}
	if err := json.Unmarshal(data, &resp); err != nil {
		return nil, nil, fmt.Errorf("read the mappings of %s: decode: %w", pattern, err)
	}
	for name, ix := range resp {
		names = append(names, name)
		if mark, _ := ix.Mappings.Meta[metaKey].(string); !engine.IsMark(mark) {
			foreign = append(foreign, name)
		}
	}
	slices.Sort(names)
	slices.Sort(foreign)
	return names, foreign, nil
}

// Claim checks, before anything is written, that no index named by the
// patterns exists without scalelab's mark: the first such index is
// refused with an *engine.NotOwnedError (wrapping engine.ErrNotOwned and
// engine.ErrConfig), unless <engine>.replace_existing is set, in which
// case those indices are deleted. A scenario claims every index it uses
// before it creates or deletes any.
func (c *Conn) Claim(ctx context.Context, patterns ...string) error {
	var foreign []string
	for _, p := range patterns {
		_, f, err := c.Indices(ctx, p)
		if err != nil {
			return err
		}
		foreign = append(foreign, f...)
	}
	if len(foreign) == 0 {
		return nil
	}
	if !c.opts.ReplaceExisting {
		return &engine.NotOwnedError{Engine: c.engine, Kind: "index", Name: foreign[0], Namespace: c.engine + "." + SetIndexPrefix, Also: foreign[1:]}
	}
	return c.deleteIndices(ctx, foreign)
}

// DeleteIndex deletes the indices matching pattern (a name, a
// comma-separated list or a wildcard) that scalelab created; none existing
// is not an error. An index matching it without scalelab's mark is
// refused (Claim), deleted only with <engine>.replace_existing: the
// pattern is resolved to indices, and only those are deleted.
func (c *Conn) DeleteIndex(ctx context.Context, pattern string) error {
	names, foreign, err := c.Indices(ctx, pattern)
	if err != nil {
		return err
	}
	if len(foreign) > 0 && !c.opts.ReplaceExisting {
		return &engine.NotOwnedError{Engine: c.engine, Kind: "index", Name: foreign[0], Namespace: c.engine + "." + SetIndexPrefix, Also: foreign[1:]}
	}
	return c.deleteIndices(ctx, names)
}

// deleteIndices deletes the named indices (no wildcard), a few per
// request.
func (c *Conn) deleteIndices(ctx context.Context, names []string) error {
	for lo := 0; lo < len(names); lo += 50 {
		list := strings.Join(names[lo:min(lo+50, len(names))], ",")
		err := c.call(ctx, http.MethodDelete, "/"+list, "ignore_unavailable=true&allow_no_indices=true&expand_wildcards=open,closed", nil, nil)
		if err != nil && metrics.ClassOf(err) != metrics.NotFound {
			return fmt.Errorf("delete index %s: %w", list, err)
		}
	}
	return nil
}
