package engine

import (
	"strconv"
	"sync"
)

// FieldStatements keeps statements built for lists of fields (an UPDATE
// of fields 1 and 3), so that a store builds each once. The zero value is
// ready to use and safe for concurrent use.
type FieldStatements struct {
	mu sync.RWMutex
	m  map[string]string
}

// Get returns the statement for fields, built by build on first use.
func (c *FieldStatements) Get(fields []int, build func(fields []int) string) string {
	var b [64]byte
	k := b[:0]
	for _, f := range fields {
		k = strconv.AppendInt(append(k, ','), int64(f), 10)
	}
	c.mu.RLock()
	q, ok := c.m[string(k)]
	c.mu.RUnlock()
	if ok {
		return q
	}
	q = build(fields)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]string{}
	}
	c.m[string(k)] = q
	c.mu.Unlock()
	return q
}

// AppendTextRecord appends key and vals to args as strings: the arguments
// of an insert into a store that keeps values as text (as YCSB's JDBC
// binding does).
func AppendTextRecord(args []any, key []byte, vals [][]byte) []any {
	args = append(args, string(key))
	for _, v := range vals {
		args = append(args, string(v))
	}
	return args
}

// TextUpdateArgs returns the values of fields (nil: every field) of vals
// as strings, the arguments of an update, with room for the key after
// them.
func TextUpdateArgs(fields []int, vals [][]byte) []any {
	if fields == nil {
		args := make([]any, 0, len(vals)+1)
		for _, v := range vals {
			args = append(args, string(v))
		}
		return args
	}
	args := make([]any, 0, len(fields)+1)
	for _, f := range fields {
		args = append(args, string(vals[f]))
	}
	return args
}
