package redis

import (
	"context"
	"errors"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/scalelab/scalelab/engine"
)

// A collection's keys all live under PREFIX + name + ":"; scalelab marks a
// collection it creates with the key PREFIX + name + ":owner" holding its
// mark. Before a run recreates or writes into a collection it checks it
// (claim): keys under the collection's prefix without the owner key are a
// user's, and the run is refused with an engine.NotOwnedError unless
// redis.replace_existing is set, which deletes them (by SCAN over that
// prefix only). Keys under any other prefix are never read or deleted.

// ownerKey is the key of a collection's mark; base is PREFIX + name.
func ownerKey(base string) string { return base + ":owner" }

// mark is the value of the owner keys the connection writes.
func (c *Conn) mark() string {
	if c.opts.Mark != "" {
		return c.opts.Mark
	}
	return engine.Mark("", "")
}

// anyKey reports whether a key matches pattern (SCAN MATCH, stopping at
// the first).
func (c *Conn) anyKey(ctx context.Context, pattern string) (bool, error) {
	var cursor uint64
	for {
		keys, next, err := c.client.Scan(ctx, cursor, pattern, dropBatch).Result()
		if err != nil {
			return false, wrap(err)
		}
		if len(keys) > 0 {
			return true, nil
		}
		if cursor = next; cursor == 0 {
			return false, nil
		}
	}
}

// unlinkAll deletes every key that matches pattern (SCAN, UNLINK in
// batches).
func (c *Conn) unlinkAll(ctx context.Context, pattern string) error {
	var cursor uint64
	for {
		keys, next, err := c.client.Scan(ctx, cursor, pattern, dropBatch).Result()
		if err != nil {
			return wrap(err)
		}
		if len(keys) > 0 {
			if err := c.client.Unlink(ctx, keys...).Err(); err != nil {
				return wrap(err)
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// claim checks the keys of the collection base (PREFIX + name) before
// anything is written: if its owner key holds scalelab's mark, the
// collection is scalelab's; if no key exists under base + ":", it is new;
// otherwise it is a user's, refused with an *engine.NotOwnedError unless
// redis.replace_existing is set, which deletes those keys. It then writes
// the owner key.
func (c *Conn) claim(ctx context.Context, base string) error {
	owner, err := c.client.Get(ctx, ownerKey(base)).Result()
	if err != nil && !errors.Is(err, goredis.Nil) {
		return fmt.Errorf("read %s: %w", ownerKey(base), wrap(err))
	}
	if err == nil && engine.IsMark(owner) {
		return nil
	}
	pattern := globEscape(base) + ":*"
	found, err := c.anyKey(ctx, pattern)
	if err != nil {
		return fmt.Errorf("look for keys %s: %w", pattern, err)
	}
	if found {
		if !c.opts.ReplaceExisting {
			return &engine.NotOwnedError{Engine: Name, Kind: "keys", Name: base + ":*", Namespace: KeyPrefix}
		}
		if err := c.unlinkAll(ctx, pattern); err != nil {
			return fmt.Errorf("delete keys %s: %w", pattern, err)
		}
	}
	if err := c.client.Set(ctx, ownerKey(base), c.mark(), 0).Err(); err != nil {
		return fmt.Errorf("write %s: %w", ownerKey(base), wrap(err))
	}
	return nil
}

// globEscape escapes the characters SCAN MATCH treats as a pattern.
func globEscape(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(out)
}
