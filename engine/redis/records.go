package redis

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/scalelab/scalelab/engine"
)

var _ engine.Records = (*Conn)(nil)

// collection keeps each record as a hash at PREFIX + name + ":r:" + key
// whose fields are the spec's field names, and every key in a sorted set
// at PREFIX + name + ":keys" with score 0, so that Redis orders the
// members by their bytes: scans are ZRANGE BYLEX from the start key
// followed by one HMGET per key (pipelined), counts are ZCARD and the
// highest key is the set's last member. Writes that touch both (insert,
// update of a record that must exist, delete) are Lua scripts, atomic on
// the server; the load writes each batch in one MULTI/EXEC.
type collection struct {
	c      *Conn
	rec    string // prefix of the records' keys
	index  string // the sorted set of keys
	fields []string
}

// Scripts of the writes that must see whether the record exists. KEYS[1]
// is the record, KEYS[2] the sorted set of keys, ARGV[1] the key; the
// fields and values follow.
var (
	insertScript = goredis.NewScript(`if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('ZADD', KEYS[2], 0, ARGV[1])
return 1`)
	updateScript = goredis.NewScript(`if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1`)
	deleteScript = goredis.NewScript(`if redis.call('DEL', KEYS[1]) == 0 then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
return 1`)
)

// Collection returns the collection of spec, deleting its records and
// its set of keys first with spec.Recreate, once it has checked that the
// keys under PREFIX + name + ":", if any, are scalelab's (claim, which
// marks the collection as scalelab's).
func (c *Conn) Collection(ctx context.Context, spec engine.CollectionSpec) (engine.Collection, error) {
	base := c.opts.Prefix + spec.Name
	col := &collection{c: c, rec: base + ":r:", index: base + ":keys", fields: spec.Fields}
	if err := c.claim(ctx, base); err != nil {
		return nil, fmt.Errorf("redis collection %s: %w", spec.Name, err)
	}
	if spec.Recreate {
		if err := col.drop(ctx); err != nil {
			return nil, fmt.Errorf("redis collection %s: drop: %w", spec.Name, err)
		}
	}
	return col, nil
}

// dropBatch is how many records drop deletes per round trip.
const dropBatch = 1000

// drop deletes every record the set of keys names, then the set.
func (m *collection) drop(ctx context.Context) error {
	cl := m.c.client
	for {
		keys, err := cl.ZRange(ctx, m.index, 0, dropBatch-1).Result()
		if err != nil {
			return wrap(err)
		}
		if len(keys) == 0 {
			break
		}
		recs := make([]string, len(keys))
		members := make([]any, len(keys))
		for i, k := range keys {
			recs[i], members[i] = m.rec+k, k
		}
		_, err = cl.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			p.Unlink(ctx, recs...)
			p.ZRem(ctx, m.index, members...)
			return nil
		})
		if err != nil {
			return wrap(err)
		}
	}
	return wrap(cl.Unlink(ctx, m.index).Err())
}

// names returns the field names of field (every field for AllFields).
func (m *collection) names(field int) []string {
	if field >= 0 {
		return m.fields[field : field+1]
	}
	return m.fields
}

// addRow adds key's row with the values of HMGET's reply of field; it
// reports false, adding nothing, when the record does not exist (every
// value nil: a record always has every field).
func (m *collection) addRow(key []byte, field int, vals []any, rows *engine.Rows) bool {
	found := false
	for _, v := range vals {
		if v != nil {
			found = true
			break
		}
	}
	if !found {
		return false
	}
	i := rows.Add(key)
	for j, v := range vals {
		f := j
		if field >= 0 {
			f = field
		}
		if s, ok := v.(string); ok {
			rows.SetString(i, f, s)
		}
	}
	return true
}

func (m *collection) Get(ctx context.Context, key []byte, field int, rows *engine.Rows) error {
	vals, err := m.c.client.HMGet(ctx, m.rec+string(key), m.names(field)...).Result()
	if err != nil {
		return wrap(err)
	}
	if !m.addRow(key, field, vals, rows) {
		return fmt.Errorf("get %s: %w", key, engine.ErrNotFound)
	}
	return nil
}

// Scan reads up to n keys >= start from the set of keys (ZRANGE BYLEX,
// Redis 6.2 or later), then their records in one pipeline; a record
// deleted in between is left out.
func (m *collection) Scan(ctx context.Context, start []byte, n, field int, rows *engine.Rows) error {
	if n <= 0 { // go-redis sends no LIMIT for a count of 0: every key
		return nil
	}
	cl := m.c.client
	keys, err := cl.ZRangeArgs(ctx, goredis.ZRangeArgs{Key: m.index, Start: "[" + string(start), Stop: "+", ByLex: true, Count: int64(n)}).Result()
	if err != nil {
		return wrap(err)
	}
	if len(keys) == 0 {
		return nil
	}
	return m.readKeys(ctx, keys, field, rows)
}

// readKeys adds the records of keys that exist to rows, in keys' order,
// reading them in one pipeline.
func (m *collection) readKeys(ctx context.Context, keys []string, field int, rows *engine.Rows) error {
	names := m.names(field)
	cmds := make([]*goredis.SliceCmd, len(keys))
	_, err := m.c.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.HMGet(ctx, m.rec+k, names...)
		}
		return nil
	})
	if err != nil {
		return wrap(err)
	}
	for i, k := range keys {
		m.addRow([]byte(k), field, cmds[i].Val(), rows)
	}
	return nil
}

// args are the script arguments: the key, then each field of fields (every
// field when nil) and its value.
func (m *collection) args(key []byte, fields []int, vals [][]byte) []any {
	if fields == nil {
		args := make([]any, 0, 1+2*len(m.fields))
		args = append(args, key)
		for f, name := range m.fields {
			args = append(args, name, vals[f])
		}
		return args
	}
	args := make([]any, 0, 1+2*len(fields))
	args = append(args, key)
	for _, f := range fields {
		args = append(args, m.fields[f], vals[f])
	}
	return args
}

// run runs a write script on key's record; it reports whether the script
// wrote (returned 1).
func (m *collection) run(ctx context.Context, s *goredis.Script, key []byte, fields []int, vals [][]byte) (bool, error) {
	k := string(key)
	var args []any
	if vals == nil {
		args = []any{k}
	} else {
		args = m.args(key, fields, vals)
	}
	n, err := s.Run(ctx, m.c.client, []string{m.rec + k, m.index}, args...).Int()
	if err != nil {
		return false, wrap(err)
	}
	return n == 1, nil
}

// Insert writes a new record, failing with ErrExists when key is stored.
func (m *collection) Insert(ctx context.Context, key []byte, vals [][]byte) error {
	ok, err := m.run(ctx, insertScript, key, nil, vals)
	if err == nil && !ok {
		err = fmt.Errorf("insert %s: %w", key, ErrExists)
	}
	return err
}

func (m *collection) Update(ctx context.Context, key []byte, fields []int, vals [][]byte) error {
	ok, err := m.run(ctx, updateScript, key, fields, vals)
	if err == nil && !ok {
		err = fmt.Errorf("update %s: %w", key, engine.ErrNotFound)
	}
	return err
}

func (m *collection) Delete(ctx context.Context, key []byte) error {
	ok, err := m.run(ctx, deleteScript, key, nil, nil)
	if err == nil && !ok {
		err = fmt.Errorf("delete %s: %w", key, engine.ErrNotFound)
	}
	return err
}

// InsertBatch writes b in one MULTI/EXEC: an HSET per record and one ZADD
// of every key (a record already stored is overwritten).
func (m *collection) InsertBatch(ctx context.Context, b *engine.Batch) error {
	if b.N == 0 {
		return nil
	}
	members := make([]goredis.Z, b.N)
	_, err := m.c.client.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		for i := range b.N {
			args := make([]any, 0, 2*len(m.fields))
			for f, v := range b.Row(i) {
				args = append(args, m.fields[f], v)
			}
			k := string(b.Keys[i])
			p.HSet(ctx, m.rec+k, args...)
			members[i] = goredis.Z{Member: k}
		}
		p.ZAdd(ctx, m.index, members...)
		return nil
	})
	return wrap(err)
}

func (m *collection) AfterLoad(context.Context) error { return nil }

// Count is the size of the set of keys.
func (m *collection) Count(ctx context.Context) (int64, error) {
	n, err := m.c.client.ZCard(ctx, m.index).Result()
	return n, wrap(err)
}

// MaxKey is the set of keys' last member.
func (m *collection) MaxKey(ctx context.Context) ([]byte, error) {
	keys, err := m.c.client.ZRange(ctx, m.index, -1, -1).Result()
	if err != nil || len(keys) == 0 {
		return nil, wrap(err)
	}
	return []byte(keys[0]), nil
}

// ReadBack reads the keys in one pipeline (the server has no replicas to
// lag).
func (m *collection) ReadBack(ctx context.Context, keys [][]byte, field int, rows *engine.Rows) error {
	if len(keys) == 0 {
		return nil
	}
	return m.readKeys(ctx, engine.Strings(keys), field, rows)
}

// Traits: one server, so reads see every acknowledged write; scans in key
// (byte) order; a missing key is told.
func (m *collection) Traits() engine.Traits {
	return engine.Traits{ReadsOwnWrites: true, KeyOrderedScans: true, TellsMissing: true}
}

func (m *collection) Close() error { return nil }
