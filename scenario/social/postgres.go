package social

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/scenario"
)

func init() { openers[postgres.Name] = openPostgres }

// pgStore keeps each user as a JSONB document: social_users(id text
// PRIMARY KEY, doc jsonb), the study's document store on PostgreSQL. Keys
// use the "C" collation so that scans run in byte order whatever the
// database's locale. Writes go to the primary; reads and scans to the
// primary, or with postgres.read_from=replicas to the replicas in turn (a
// replica behind the primary may miss a user just inserted: counted
// not_found_inserted, never an integrity error). Updates merge the changed
// fields into the document (doc || patch).
type pgStore struct{ c *postgres.Conn }

const (
	pgRead   = "SELECT doc FROM " + sqlTable + " WHERE id = $1"
	pgScan   = "SELECT id, doc FROM " + sqlTable + " WHERE id >= $1 ORDER BY id LIMIT $2"
	pgUpdate = "UPDATE " + sqlTable + " SET doc = doc || $1::jsonb WHERE id = $2"
	pgInsert = "INSERT INTO " + sqlTable + " (id, doc) VALUES ($1, $2::jsonb)"
	pgDelete = "DELETE FROM " + sqlTable + " WHERE id = $1"
	pgLoad   = "INSERT INTO " + sqlTable + " (id, doc) SELECT id, doc::jsonb FROM unnest($1::text[], $2::text[]) AS t(id, doc)"
)

func openPostgres(ctx context.Context, env scenario.Env, cfg *config) (store, error) {
	c, err := asConn[*postgres.Conn](env)
	if err != nil {
		return nil, err
	}
	p := c.Primary()
	if cfg.load {
		if _, err := p.Exec(ctx, "DROP TABLE IF EXISTS "+sqlTable); err != nil {
			return nil, fmt.Errorf("social on %s: drop %s: %w", env.Engine, sqlTable, err)
		}
	}
	if _, err := p.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+sqlTable+` (id text COLLATE "C" PRIMARY KEY, doc jsonb NOT NULL)`); err != nil {
		return nil, fmt.Errorf("social on %s: create %s: %w", env.Engine, sqlTable, err)
	}
	return &pgStore{c: c}, nil
}

func pgClassify(ctx context.Context, err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return engine.ErrNotFound
	}
	return postgres.Classify(ctx, err)
}

func (s *pgStore) read(ctx context.Context, key string, u *User) error {
	return s.readFrom(ctx, s.c.ReadPool(), key, u)
}

// readForAudit reads from the primary (auditReader): replicas may still be
// replaying, or be down, when the audit reads back.
func (s *pgStore) readForAudit(ctx context.Context, key string, u *User) error {
	return s.readFrom(ctx, s.c.Primary(), key, u)
}

func (s *pgStore) readFrom(ctx context.Context, pool *pgxpool.Pool, key string, u *User) error {
	var doc []byte
	if err := pool.QueryRow(ctx, pgRead, key).Scan(&doc); err != nil {
		return pgClassify(ctx, err)
	}
	return decodeUser(key, doc, u)
}

func (s *pgStore) update(ctx context.Context, key, status string, lastSeen int64) error {
	tag, err := s.c.Primary().Exec(ctx, pgUpdate, string(patchDoc(status, lastSeen)), key)
	if err != nil {
		return pgClassify(ctx, err)
	}
	if tag.RowsAffected() == 0 {
		return engine.ErrNotFound
	}
	return nil
}

func (s *pgStore) insert(ctx context.Context, u *User) error {
	_, err := s.c.Primary().Exec(ctx, pgInsert, u.ID, string(u.Doc()))
	return pgClassify(ctx, err)
}

func (s *pgStore) remove(ctx context.Context, key string) error {
	tag, err := s.c.Primary().Exec(ctx, pgDelete, key)
	if err != nil {
		return pgClassify(ctx, err)
	}
	if tag.RowsAffected() == 0 {
		return engine.ErrNotFound
	}
	return nil
}

func (s *pgStore) scan(ctx context.Context, start string, n int, fn func(u *User) error) error {
	rows, err := s.c.ReadPool().Query(ctx, pgScan, start, n)
	if err != nil {
		return pgClassify(ctx, err)
	}
	defer rows.Close()
	var u User
	for rows.Next() {
		var id string
		var doc []byte
		if err := rows.Scan(&id, &doc); err != nil {
			return pgClassify(ctx, err)
		}
		if err := decodeUser(id, doc, &u); err != nil {
			return err
		}
		if err := fn(&u); err != nil {
			return err
		}
	}
	return pgClassify(ctx, rows.Err())
}

// insertBatch writes a load batch with one INSERT of unnested arrays.
func (s *pgStore) insertBatch(ctx context.Context, users []User) error {
	ids, docs := make([]string, len(users)), make([]string, len(users))
	for i := range users {
		ids[i], docs[i] = users[i].ID, string(users[i].Doc())
	}
	_, err := s.c.Primary().Exec(ctx, pgLoad, ids, docs)
	return pgClassify(ctx, err)
}

func (s *pgStore) afterLoad(ctx context.Context) error {
	// Fresh statistics, so that the planner uses the primary key at once.
	_, err := s.c.Primary().Exec(ctx, "ANALYZE "+sqlTable)
	return pgClassify(ctx, err)
}

func (s *pgStore) count(ctx context.Context) (int64, error) {
	var n int64
	err := s.c.Primary().QueryRow(ctx, "SELECT count(*) FROM "+sqlTable).Scan(&n)
	return n, pgClassify(ctx, err)
}

func (s *pgStore) maxKey(ctx context.Context) (string, error) {
	var k *string
	if err := s.c.Primary().QueryRow(ctx, "SELECT max(id) FROM "+sqlTable).Scan(&k); err != nil || k == nil {
		return "", pgClassify(ctx, err)
	}
	return *k, nil
}

func (s *pgStore) close() error { return nil }
