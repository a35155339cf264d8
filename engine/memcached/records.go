package memcached

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/scalelab/scalelab/engine"
)

var _ engine.Records = (*Conn)(nil)

// collection keeps each record as one item: its fields' values, each
// preceded by its length as a uvarint, with the field count as the item's
// flags. An item's key is NAMESPACE:name:GENERATION:key; a key that
// memcached cannot take (over 250 bytes with the rest, or with spaces or
// control characters) is replaced by NAMESPACE:name:GENERATION#SHA-256 of
// it. The generation, stored at NAMESPACE:name:gen, is what Recreate
// changes: the records of earlier generations can no longer be reached and
// memcached evicts them as it needs room. memcached cannot list its keys:
// Scan, Count and MaxKey are unsupported.
type collection struct {
	c      *Conn
	prefix string // NAMESPACE:name:GENERATION
	nf     int
}

// Collection returns the collection of spec: its current generation, or a
// new one with spec.Recreate (or when there is none yet).
func (c *Conn) Collection(ctx context.Context, spec engine.CollectionSpec) (engine.Collection, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	base := c.opts.Namespace + ":" + spec.Name + ":"
	gen, err := c.generation(base+"gen", spec.Recreate)
	if err != nil {
		return nil, fmt.Errorf("memcached collection %s: %w", spec.Name, err)
	}
	return &collection{c: c, prefix: base + gen, nf: len(spec.Fields)}, nil
}

// generation returns the generation stored at key: a new one (the time in
// nanoseconds, base 36) when fresh is true or none is stored.
func (c *Conn) generation(key string, fresh bool) (string, error) {
	newGen := strconv.FormatInt(time.Now().UnixNano(), 36)
	if fresh {
		return newGen, wrap(c.mc.Set(&memcache.Item{Key: key, Value: []byte(newGen)}))
	}
	for range 3 {
		it, err := c.mc.Get(key)
		if err == nil {
			return string(it.Value), nil
		}
		if !errors.Is(err, memcache.ErrCacheMiss) {
			return "", wrap(err)
		}
		switch err := c.mc.Add(&memcache.Item{Key: key, Value: []byte(newGen)}); {
		case err == nil:
			return newGen, nil
		case !errors.Is(err, memcache.ErrNotStored):
			return "", wrap(err)
		}
		// another client added one meanwhile: read it
	}
	return "", wrap(errors.New("memcached: the generation key keeps changing"))
}

// maxKey is the longest key memcached takes.
const maxKey = 250

// itemKey returns the item key of key.
func (m *collection) itemKey(key []byte) string { return itemKey(m.prefix, key) }

// itemKey returns prefix + ":" + key, or, for a key memcached cannot take
// as it is (over maxKey bytes with the prefix, or with spaces or control
// characters), prefix + "#" + the key's SHA-256 in base64.
func itemKey[K string | []byte](prefix string, key K) string {
	if len(prefix)+1+len(key) <= maxKey && legal(key) {
		return prefix + ":" + string(key)
	}
	h := sha256.Sum256([]byte(key))
	return prefix + "#" + base64.RawURLEncoding.EncodeToString(h[:])
}

// legal reports whether key has no space or control character.
func legal[K string | []byte](key K) bool {
	for i := range len(key) {
		if b := key[i]; b <= ' ' || b == 0x7f {
			return false
		}
	}
	return true
}

// encode appends vals to dst, each preceded by its length.
func encode(dst []byte, vals [][]byte) []byte {
	for _, v := range vals {
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		dst = append(dst, v...)
	}
	return dst
}

// decode splits an item's value into its nf fields (slices of b).
func decode(b []byte, nf int, out [][]byte) error {
	for f := range nf {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return fmt.Errorf("memcached: field %d of a record is cut short", f)
		}
		out[f], b = b[k:k+int(n)], b[k+int(n):]
	}
	if len(b) != 0 {
		return errors.New("memcached: a record has bytes after its last field")
	}
	return nil
}

// item is the item of key with every field of vals.
func (m *collection) item(key []byte, vals [][]byte) *memcache.Item {
	size := 0
	for _, v := range vals {
		size += binary.MaxVarintLen32 + len(v)
	}
	return &memcache.Item{Key: m.itemKey(key), Value: encode(make([]byte, 0, size), vals), Flags: uint32(m.nf)}
}

// fields decodes an item into its fields; an item the engine did not
// write that way is an engine.ErrIntegrity.
func (m *collection) fields(it *memcache.Item) ([][]byte, error) {
	if it.Flags != uint32(m.nf) {
		return nil, fmt.Errorf("%w: memcached: a record of %d fields, want %d", engine.ErrIntegrity, it.Flags, m.nf)
	}
	vals := make([][]byte, m.nf)
	if err := decode(it.Value, m.nf, vals); err != nil {
		return nil, fmt.Errorf("%w: %w", engine.ErrIntegrity, err)
	}
	return vals, nil
}

// addRow adds key's row with field (every field for AllFields) of it.
func (m *collection) addRow(key []byte, field int, it *memcache.Item, rows *engine.Rows) error {
	vals, err := m.fields(it)
	if err != nil {
		return err
	}
	i := rows.Add(key)
	if field >= 0 {
		rows.Set(i, field, vals[field])
		return nil
	}
	for f, v := range vals {
		rows.Set(i, f, v)
	}
	return nil
}

func (m *collection) Get(ctx context.Context, key []byte, field int, rows *engine.Rows) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	it, err := m.c.mc.Get(m.itemKey(key))
	if errors.Is(err, memcache.ErrCacheMiss) {
		return fmt.Errorf("get %s: %w", key, engine.ErrNotFound)
	}
	if err != nil {
		return wrap(err)
	}
	return m.addRow(key, field, it, rows)
}

// errNoScans is what Scan, Count and MaxKey return.
var errNoScans = fmt.Errorf("memcached cannot list its keys (no scans, counts or highest key): %w", errors.ErrUnsupported)

// Scan is unsupported: memcached cannot list its keys.
func (m *collection) Scan(context.Context, []byte, int, int, *engine.Rows) error { return errNoScans }

// Insert adds a new record, failing with ErrExists when key is stored.
func (m *collection) Insert(ctx context.Context, key []byte, vals [][]byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := m.c.mc.Add(m.item(key, vals))
	if errors.Is(err, memcache.ErrNotStored) {
		return fmt.Errorf("insert %s: %w", key, ErrExists)
	}
	return wrap(err)
}

// casTries is how often Update reads and swaps a record that concurrent
// writes keep changing before it gives up.
const casTries = 100

// casPause is the longest pause after the first conflict of an Update;
// the n-th waits up to n times as long (at most 20 times).
const casPause = 50 * time.Microsecond

// Update replaces the whole record when fields is nil; otherwise it reads
// the record and swaps in the new values if nobody wrote it meanwhile
// (gets, then cas), trying again when somebody did, after a random pause
// that grows with each conflict so that writers racing on one record stop
// colliding.
func (m *collection) Update(ctx context.Context, key []byte, fields []int, vals [][]byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	notFound := func(err error) bool {
		return errors.Is(err, memcache.ErrCacheMiss) || errors.Is(err, memcache.ErrNotStored)
	}
	if fields == nil {
		err := m.c.mc.Replace(m.item(key, vals))
		if notFound(err) {
			return fmt.Errorf("update %s: %w", key, engine.ErrNotFound)
		}
		return wrap(err)
	}
	ik := m.itemKey(key)
	for try := range casTries {
		it, err := m.c.mc.Get(ik)
		if notFound(err) {
			return fmt.Errorf("update %s: %w", key, engine.ErrNotFound)
		}
		if err != nil {
			return wrap(err)
		}
		cur, err := m.fields(it)
		if err != nil {
			return err
		}
		for _, f := range fields {
			cur[f] = vals[f]
		}
		size := len(it.Value)
		for _, f := range fields {
			size += len(vals[f])
		}
		it.Value = encode(make([]byte, 0, size), cur)
		err = m.c.mc.CompareAndSwap(it)
		switch {
		case err == nil:
			return nil
		case notFound(err):
			return fmt.Errorf("update %s: %w", key, engine.ErrNotFound)
		case !errors.Is(err, memcache.ErrCASConflict):
			return wrap(err)
		}
		pause := time.NewTimer(time.Duration(rand.Int64N(int64(min(try+1, 20)) * int64(casPause))))
		select {
		case <-ctx.Done():
			pause.Stop()
			return ctx.Err()
		case <-pause.C:
		}
	}
	return wrap(fmt.Errorf("update %s: %w (%d tries)", key, errContended, casTries))
}

func (m *collection) Delete(ctx context.Context, key []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := m.c.mc.Delete(m.itemKey(key))
	if errors.Is(err, memcache.ErrCacheMiss) {
		return fmt.Errorf("delete %s: %w", key, engine.ErrNotFound)
	}
	return wrap(err)
}

// InsertBatch sets every record of b, one round trip each (memcached's
// text protocol has no multi-set); a record already stored is
// overwritten.
func (m *collection) InsertBatch(ctx context.Context, b *engine.Batch) error {
	for i := range b.N {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := m.c.mc.Set(m.item(b.Keys[i], b.Row(i))); err != nil {
			return wrap(err)
		}
	}
	return nil
}

func (m *collection) AfterLoad(context.Context) error { return nil }

// Count is unsupported: memcached cannot list its keys.
func (m *collection) Count(context.Context) (int64, error) { return 0, errNoScans }

// MaxKey is unsupported: memcached cannot list its keys.
func (m *collection) MaxKey(context.Context) ([]byte, error) { return nil, errNoScans }

// readBackBatch is how many keys ReadBack asks for in one gets.
const readBackBatch = 100

// ReadBack reads the keys with multi-key gets, readBackBatch at a time.
func (m *collection) ReadBack(ctx context.Context, keys [][]byte, field int, rows *engine.Rows) error {
	for lo := 0; lo < len(keys); lo += readBackBatch {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch := keys[lo:min(lo+readBackBatch, len(keys))]
		iks := make([]string, len(batch))
		for i, k := range batch {
			iks[i] = m.itemKey(k)
		}
		items, err := m.c.mc.GetMulti(iks)
		if err != nil {
			return wrap(err)
		}
		for i, k := range batch {
			if it, ok := items[iks[i]]; ok {
				if err := m.addRow(k, field, it, rows); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Traits: a key lives on one server, so reads see every acknowledged
// write; a missing key is told; there are no scans.
func (m *collection) Traits() engine.Traits {
	return engine.Traits{ReadsOwnWrites: true, TellsMissing: true, NoScans: true}
}

func (m *collection) Close() error { return nil }
