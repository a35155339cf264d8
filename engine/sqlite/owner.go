package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/scalelab/scalelab/engine"
)

// SQLite keeps no comments on tables: what a run creates is recorded in a
// registry table of the file, scalelab_objects(name, mark), one row per
// table holding its mark (engine.Mark). Claim refuses, before anything is
// written, a table of a scenario's name that exists without a row there.

// RegistryTable is the table of the database file that records the tables
// scalelab created in it.
const RegistryTable = "scalelab_objects"

// KeyReplaceExisting is sqlite.replace_existing.
const KeyReplaceExisting = "sqlite." + engine.ReplaceExistingKey

// object is an entry of sqlite_master named as a table.
type object struct {
	name, kind, mark string
}

// objects returns the entries of sqlite_master (tables, views, indexes,
// triggers) named as tables, in the order of tables (SQLite's names ignore
// case), with their registry marks ("" without one).
func (c *Conn) objects(ctx context.Context, tables []string) ([]object, error) {
	marks := map[string]string{}
	var hasRegistry bool
	if err := c.db.QueryRowContext(ctx, "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?", RegistryTable).Scan(&hasRegistry); err != nil {
		return nil, err
	}
	if hasRegistry {
		rows, err := c.db.QueryContext(ctx, "SELECT name, mark FROM "+RegistryTable)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var n, m string
			if err := rows.Scan(&n, &m); err != nil {
				rows.Close()
				return nil, err
			}
			marks[strings.ToLower(n)] = m
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	var objs []object
	for _, t := range tables {
		o := object{}
		err := c.db.QueryRowContext(ctx, "SELECT name, type FROM sqlite_master WHERE name = ? COLLATE NOCASE", t).Scan(&o.name, &o.kind)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, err
		}
		o.mark = marks[strings.ToLower(o.name)]
		objs = append(objs, o)
	}
	return objs, nil
}

// Claim checks, before a run writes anything, the tables it is about to
// create, drop, empty or use. A table that does not exist, or that the
// registry records as scalelab's, is the run's. Any other object of such a
// name is refused with an *engine.NotOwnedError naming the first one and
// the file, unless sqlite.replace_existing=true: then every one of them is
// dropped, for the run to create and mark.
func (c *Conn) Claim(ctx context.Context, tables ...string) error {
	objs, err := c.objects(ctx, tables)
	if err != nil {
		return fmt.Errorf("sqlite %s: check tables %s: %w", c.path, strings.Join(tables, ", "), err)
	}
	var foreign []object
	for _, o := range objs {
		if o.kind != "table" || !engine.IsMark(o.mark) {
			foreign = append(foreign, o)
		}
	}
	if len(foreign) == 0 {
		return nil
	}
	if !c.replace {
		return &engine.NotOwnedError{Engine: Name, Kind: foreign[0].kind, Name: foreign[0].name + " in " + c.path,
			Also: engine.ObjectNames(foreign[1:], func(o object) string { return o.name })}
	}
	for _, o := range foreign {
		q := "DROP " + strings.ToUpper(o.kind) + " IF EXISTS " + quoteIdent(o.name)
		if _, err := c.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("sqlite %s: replace %s %s (%s=true): %w", c.path, o.kind, o.name, KeyReplaceExisting, err)
		}
	}
	return nil
}

// MarkTables records each of tables that exists and is not yet recorded
// in the registry (created with the first mark): call it right after
// creating them. A recorded table keeps its mark.
func (c *Conn) MarkTables(ctx context.Context, tables ...string) error {
	if _, err := c.db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+RegistryTable+" (name TEXT PRIMARY KEY, mark TEXT NOT NULL)"); err != nil {
		return fmt.Errorf("sqlite %s: create %s: %w", c.path, RegistryTable, err)
	}
	objs, err := c.objects(ctx, tables)
	if err != nil {
		return fmt.Errorf("sqlite %s: mark tables %s: %w", c.path, strings.Join(tables, ", "), err)
	}
	mark := engine.Mark(c.scenario, c.run)
	for _, o := range objs {
		if o.kind != "table" || engine.IsMark(o.mark) {
			continue
		}
		if _, err := c.db.ExecContext(ctx, "INSERT INTO "+RegistryTable+" (name, mark) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET mark = excluded.mark", strings.ToLower(o.name), mark); err != nil {
			return fmt.Errorf("sqlite %s: mark table %s: %w", c.path, o.name, err)
		}
	}
	return nil
}

// quoteIdent is name as an SQL identifier.
func quoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }
