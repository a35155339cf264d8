package redis

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/scalelab/scalelab/engine"
)

var (
	_ engine.Cacher      = (*Conn)(nil)
	_ engine.CacheEngine = (*Engine)(nil)
)

// HasCache reports true: the engine's connections implement engine.Cacher
// (a cache tier, --cache redis).
func (*Engine) HasCache() bool { return true }

// validNamespace is what a key-value namespace may be: it is part of every
// key and of the SCAN pattern that finds old generations, so it holds no
// ':' and no glob character.
var validNamespace = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,40}$`)

// kv is a namespace of plain string keys with expiry: each entry is
// PREFIX + "kv:" + namespace + ":" + GENERATION + ":" + key, and the
// namespace's current generation (an integer from INCR) is stored at
// PREFIX + "kv:" + namespace + ":gen".
type kv struct {
	c    *Conn
	keys string // PREFIX kv:namespace:GENERATION:
}

// genScript returns the namespace's generation, creating the first one
// when there is none, atomically (two clients opening a new namespace at
// once get the same generation).
var genScript = goredis.NewScript(`local g = redis.call('GET', KEYS[1])
if not g then g = redis.call('INCR', KEYS[1]) end
return tostring(g)`)

// KV returns the key-value cache of namespace. fresh starts a new
// generation (INCR of the generation key), so that what earlier users of
// the namespace stored is no longer seen, and then deletes the keys of
// the older generations (SCAN over the namespace, UNLINK 1,000 at a time:
// Redis frees their memory in a background thread) before it returns, so
// that a server without maxmemory does not fill up run after run.
// Without fresh, the current generation is used (created when there is
// none), so that several clients share the namespace.
func (c *Conn) KV(ctx context.Context, namespace string, fresh bool) (engine.KV, error) {
	if !validNamespace.MatchString(namespace) {
		return nil, fmt.Errorf("%w: key-value namespace %q: want 1 to 40 letters, digits, '_', '.' or '-'", ErrConfig, namespace)
	}
	base := c.opts.Prefix + "kv:" + namespace + ":"
	var gen string
	var err error
	if fresh {
		var n int64
		n, err = c.client.Incr(ctx, base+"gen").Result()
		gen = strconv.FormatInt(n, 10)
	} else {
		gen, err = genScript.Run(ctx, c.client, []string{base + "gen"}).Text()
	}
	if err != nil {
		return nil, fmt.Errorf("redis kv %s: generation: %w", namespace, wrap(err))
	}
	if fresh {
		if err := c.dropGenerations(ctx, base, gen); err != nil {
			return nil, fmt.Errorf("redis kv %s: delete the older generations: %w", namespace, err)
		}
	}
	return &kv{c: c, keys: base + gen + ":"}, nil
}

// dropGenerations unlinks the keys under base whose generation is older
// than gen. Keys of a newer generation (another client's fresh start
// meanwhile) and the generation key itself stay.
func (c *Conn) dropGenerations(ctx context.Context, base, gen string) error {
	current, err := strconv.ParseInt(gen, 10, 64)
	if err != nil {
		return fmt.Errorf("generation %q is not a number", gen)
	}
	var cursor uint64
	old := make([]string, 0, dropBatch)
	for {
		keys, next, err := c.client.Scan(ctx, cursor, base+"*", dropBatch).Result()
		if err != nil {
			return wrap(err)
		}
		for _, k := range keys {
			g, _, ok := strings.Cut(strings.TrimPrefix(k, base), ":")
			if n, err := strconv.ParseInt(g, 10, 64); ok && err == nil && n < current {
				old = append(old, k)
			}
		}
		if len(old) >= dropBatch || (next == 0 && len(old) > 0) {
			if err := c.client.Unlink(ctx, old...).Err(); err != nil {
				return wrap(err)
			}
			old = old[:0]
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// Get returns key's value (GET), or an error wrapping engine.ErrNotFound.
func (k *kv) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := k.c.client.Get(ctx, k.keys+key).Bytes()
	if errors.Is(err, goredis.Nil) {
		return nil, fmt.Errorf("redis kv get %s: %w", key, engine.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("redis kv get %s: %w", key, wrap(err))
	}
	return b, nil
}

// Set stores value under key (SET): with ttl > 0 it expires after ttl
// rounded up to the millisecond (PX); without, it never expires.
func (k *kv) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl < 0 {
		return fmt.Errorf("redis kv set %s: %w: negative ttl %s", key, ErrConfig, ttl)
	}
	if err := k.c.client.Set(ctx, k.keys+key, value, ttlMillis(ttl)).Err(); err != nil {
		return fmt.Errorf("redis kv set %s: %w", key, wrap(err))
	}
	return nil
}

// ttlMillis rounds a positive ttl up to a whole number of milliseconds,
// Redis's finest expiry (go-redis would cut it down).
func ttlMillis(ttl time.Duration) time.Duration {
	if r := ttl % time.Millisecond; r != 0 {
		ttl += time.Millisecond - r
	}
	return ttl
}

// Delete drops key (UNLINK); a key that is not there is no error.
func (k *kv) Delete(ctx context.Context, key string) error {
	if err := k.c.client.Unlink(ctx, k.keys+key).Err(); err != nil {
		return fmt.Errorf("redis kv delete %s: %w", key, wrap(err))
	}
	return nil
}
