package social

import (
	"context"
	"errors"
	"strconv"

	"github.com/scalelab/scalelab/engine/memory"
	"github.com/scalelab/scalelab/scenario"
)

func init() { openers[memory.Name] = openMemory }

// memoryStore keeps each user as a memory.Record: the JSON document under
// "doc", and the fields updates write ("status", "last_seen") beside it,
// overriding the document's.
type memoryStore struct{ c *memory.Conn }

func openMemory(_ context.Context, env scenario.Env, cfg *config) (store, error) {
	c, err := asConn[*memory.Conn](env)
	if err != nil {
		return nil, err
	}
	if cfg.load {
		c.Clear()
	}
	return &memoryStore{c: c}, nil
}

// decode fills u from a stored record.
func decodeRecord(key string, rec memory.Record, u *User) error {
	if err := decodeUser(key, rec["doc"], u); err != nil {
		return err
	}
	if v, ok := rec["status"]; ok {
		u.Status = string(v)
	}
	if v, ok := rec["last_seen"]; ok {
		t, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return err
		}
		u.LastSeen = t
	}
	return nil
}

func (m *memoryStore) read(ctx context.Context, key string, u *User) error {
	return m.c.View(ctx, key, func(rec memory.Record) error { return decodeRecord(key, rec, u) })
}

// readForAudit is read without injected faults (auditReader).
func (m *memoryStore) readForAudit(_ context.Context, key string, u *User) error {
	return m.c.Peek(key, func(rec memory.Record) error { return decodeRecord(key, rec, u) })
}

func (m *memoryStore) update(ctx context.Context, key, status string, lastSeen int64) error {
	return m.c.Update(ctx, key, memory.Record{"status": []byte(status), "last_seen": strconv.AppendInt(nil, lastSeen, 10)})
}

func (m *memoryStore) insert(ctx context.Context, u *User) error {
	return m.c.Insert(ctx, u.ID, memory.Record{"doc": u.Doc()})
}

func (m *memoryStore) remove(ctx context.Context, key string) error { return m.c.Delete(ctx, key) }

func (m *memoryStore) scan(ctx context.Context, start string, n int, fn func(u *User) error) error {
	var u User
	return m.c.Scan(ctx, start, n, func(key string, rec memory.Record) error {
		if err := decodeRecord(key, rec, &u); err != nil {
			return err
		}
		return fn(&u)
	})
}

// loadRetries is how often the load retries a user that failed with an
// injected fault: memory.error_rate is meant for the run. Dropped writes
// (memory.drop_writes) stay dropped, so lost users still show.
const loadRetries = 100

func (m *memoryStore) insertBatch(ctx context.Context, users []User) error {
	for i := range users {
		var err error
		for range loadRetries {
			if err = m.insert(ctx, &users[i]); !errors.Is(err, memory.ErrInjected) {
				break
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (m *memoryStore) afterLoad(context.Context) error { return nil }

func (m *memoryStore) count(context.Context) (int64, error) { return int64(m.c.Len()), nil }

func (m *memoryStore) maxKey(ctx context.Context) (string, error) {
	mx := ""
	err := m.c.Scan(ctx, "", 0, func(key string, _ memory.Record) error { mx = key; return nil })
	return mx, err
}

func (m *memoryStore) close() error { return nil }
