package search

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/scalelab/scalelab/metrics"
)

// BulkBuilder builds the NDJSON body of a _bulk request. Reuse one per
// worker with Reset.
type BulkBuilder struct {
	buf []byte
	n   int
}

// Reset empties the builder, keeping its buffer.
func (b *BulkBuilder) Reset() { b.buf, b.n = b.buf[:0], 0 }

// Len is the number of actions added.
func (b *BulkBuilder) Len() int { return b.n }

// Bytes is the request body.
func (b *BulkBuilder) Bytes() []byte { return b.buf }

func (b *BulkBuilder) action(op, index, id, routing string) {
	b.buf = append(b.buf, `{"`...)
	b.buf = append(b.buf, op...)
	b.buf = append(b.buf, `":{"_index":`...)
	b.buf = AppendJSONString(b.buf, index)
	if id != "" {
		b.buf = append(b.buf, `,"_id":`...)
		b.buf = AppendJSONString(b.buf, id)
	}
	if routing != "" {
		b.buf = append(b.buf, `,"routing":`...)
		b.buf = AppendJSONString(b.buf, routing)
	}
	b.buf = append(b.buf, "}}\n"...)
	b.n++
}

// Index adds an index action (create or replace doc under id; "" lets the
// server choose the id).
func (b *BulkBuilder) Index(index, id, routing string, doc []byte) {
	b.action("index", index, id, routing)
	b.buf = append(append(b.buf, doc...), '\n')
}

// Create adds a create action (fails for that item if id exists).
func (b *BulkBuilder) Create(index, id, routing string, doc []byte) {
	b.action("create", index, id, routing)
	b.buf = append(append(b.buf, doc...), '\n')
}

// BulkError reports the failed items of a _bulk request. Its class is
// rejected when any item was rejected (HTTP 429), else that of the first
// failure.
type BulkError struct {
	Failed, Total int
	First         *HTTPError
	rejected      bool
}

func (e *BulkError) Error() string {
	return fmt.Sprintf("bulk: %d of %d items failed, first: %v", e.Failed, e.Total, e.First)
}

// ErrorClass classes the bulk failure.
func (e *BulkError) ErrorClass() metrics.Class {
	if e.rejected {
		return metrics.Rejected
	}
	if e.First != nil {
		return e.First.ErrorClass()
	}
	return metrics.Other
}

// bulkResponse is the part of a _bulk response we read when it has errors.
type bulkResponse struct {
	Errors bool                         `json:"errors"`
	Items  []map[string]bulkItemOutcome `json:"items"`
}

type bulkItemOutcome struct {
	Status int             `json:"status"`
	Error  json.RawMessage `json:"error"`
}

var noErrors = []byte(`"errors":false`)

// Bulk sends the builder's actions and returns a *BulkError when any item
// failed. Writes carry the engine's refresh policy, except when load is
// true: loads leave refreshing to AfterLoad.
func (c *Conn) Bulk(ctx context.Context, b *BulkBuilder, load bool) error {
	if b.n == 0 {
		return nil
	}
	refresh := c.opts.Refresh.Param
	if load {
		refresh = ""
	}
	status, data, err := c.do(ctx, http.MethodPost, "/_bulk", docQuery("", refresh, ""), "application/x-ndjson", b.buf)
	if err != nil {
		return err
	}
	if status >= 300 {
		return newHTTPError(http.MethodPost, "/_bulk", status, data)
	}
	// The response starts {"took":N,"errors":false,...}: skip decoding the
	// items when nothing failed.
	if bytes.Contains(data[:min(len(data), 64)], noErrors) {
		return nil
	}
	var r bulkResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("bulk: decode response: %w", err)
	}
	if !r.Errors {
		return nil
	}
	be := &BulkError{Total: len(r.Items)}
	for _, item := range r.Items {
		for _, o := range item {
			if o.Status < 300 {
				continue
			}
			be.Failed++
			if o.Status == http.StatusTooManyRequests {
				be.rejected = true
			}
			if be.First == nil {
				body, _ := json.Marshal(map[string]json.RawMessage{"error": o.Error})
				be.First = newHTTPError(http.MethodPost, "/_bulk", o.Status, body)
			}
		}
	}
	return be
}

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s as a JSON string (quoted and escaped) to dst.
// Invalid UTF-8 becomes U+FFFD, as encoding/json does.
func AppendJSONString[T string | []byte](dst []byte, s T) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
