package postgres

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/setting"
)

// What a run creates lives in one schema (postgres.schema, default
// scalelab): every connection of every pool, the primary's and the
// replicas', runs with search_path set to that schema alone, so that the
// scenarios' unqualified table names never reach a user's tables in
// public. Every table a run creates carries a mark in its comment
// (engine.Mark); Claim refuses, before anything is written, a table of a
// scenario's name that exists without one.

// DefaultSchema is the schema a run's tables live in by default.
const DefaultSchema = "scalelab"

// schemaRE is what postgres.schema accepts: an SQL identifier that needs
// no quoting, at most 63 bytes (PostgreSQL's NAMEDATALEN - 1).
var schemaRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// checkSchema validates postgres.schema, naming the nearest valid name.
func checkSchema(v setting.Value) error {
	s := v.String()
	if schemaRE.MatchString(s) && !strings.HasPrefix(s, "pg_") {
		return nil
	}
	return fmt.Errorf("a schema name is lower-case letters, digits and '_', starting with a letter or '_', at most 63 characters, not starting with pg_ (nearest valid name: %s)", nearestSchema(s))
}

// nearestSchema turns s into a valid schema name: lower case, every other
// character '_', a leading digit or pg_ prefixed.
func nearestSchema(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	n := b.String()
	if n == "" || (n[0] >= '0' && n[0] <= '9') || strings.HasPrefix(n, "pg_") {
		n = "s_" + n
	}
	if len(n) > 63 {
		n = n[:63]
	}
	return n
}

// Schema returns the schema the run's tables live in (postgres.schema):
// every connection's search_path.
func (c *Conn) Schema() string { return c.opts.Schema }

// ensureSchema creates the schema on the primary when it is missing. An
// existing schema is used as it is, without asking for the CREATE
// privilege on the database that creating one needs.
func (c *Conn) ensureSchema(ctx context.Context) error {
	var exists bool
	if err := c.primary.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", c.opts.Schema).Scan(&exists); err != nil {
		return fmt.Errorf("postgres: look up schema %s: %w", c.opts.Schema, Classify(ctx, err))
	}
	if exists {
		return nil
	}
	if _, err := c.primary.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{c.opts.Schema}.Sanitize()); err != nil {
		return fmt.Errorf("postgres: create schema %s (%s): %w", c.opts.Schema, KeySchema, Classify(ctx, err))
	}
	return nil
}

// relation is an object of the schema with a table's name.
type relation struct {
	name, kind, comment string
}

// relKinds names pg_class.relkind values, and how each is dropped.
var relKinds = map[string][2]string{
	"r": {"table", "TABLE"}, "p": {"table", "TABLE"}, "v": {"view", "VIEW"}, "m": {"materialized view", "MATERIALIZED VIEW"},
	"f": {"foreign table", "FOREIGN TABLE"}, "S": {"sequence", "SEQUENCE"}, "i": {"index", "INDEX"}, "I": {"index", "INDEX"},
	"c": {"type", "TYPE"},
}

// relations returns the objects of the schema named as tables, in the
// order of tables, with their comments ("" without one).
func (c *Conn) relations(ctx context.Context, tables []string) ([]relation, error) {
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = strings.ToLower(t) // unquoted names fold to lower case
	}
	tables = names
	rows, err := c.primary.Query(ctx, `SELECT c.relname, c.relkind::text, COALESCE(obj_description(c.oid, 'pg_class'), '')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = ANY($2)`, c.opts.Schema, tables)
	if err != nil {
		return nil, err
	}
	rels, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (relation, error) {
		var rel relation
		err := r.Scan(&rel.name, &rel.kind, &rel.comment)
		return rel, err
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(rels, func(a, b relation) int { return slices.Index(tables, a.name) - slices.Index(tables, b.name) })
	return rels, nil
}

// Claim checks, before a run writes anything, the tables it is about to
// create, drop, truncate or use (names as the scenario writes them:
// lower case, unquoted, in the schema). A table that does not exist, or
// that scalelab created (its comment is a mark), is the run's. Any other
// object of such a name is refused with an *engine.NotOwnedError naming
// the first one (schema.table), unless postgres.replace_existing=true:
// then every one of them is dropped, for the run to create and mark.
func (c *Conn) Claim(ctx context.Context, tables ...string) error {
	rels, err := c.relations(ctx, tables)
	if err != nil {
		return fmt.Errorf("postgres: check tables %s in schema %s: %w", strings.Join(tables, ", "), c.opts.Schema, Classify(ctx, err))
	}
	var foreign []relation
	for _, r := range rels {
		if !(relKinds[r.kind][0] == "table" && engine.IsMark(r.comment)) {
			foreign = append(foreign, r)
		}
	}
	if len(foreign) == 0 {
		return nil
	}
	if !c.opts.ReplaceExisting {
		kind := relKinds[foreign[0].kind][0]
		if kind == "" {
			kind = "relation"
		}
		return &engine.NotOwnedError{Engine: Name, Kind: kind, Name: c.opts.Schema + "." + foreign[0].name, Namespace: KeySchema,
			Also: engine.ObjectNames(foreign[1:], func(r relation) string { return c.opts.Schema + "." + r.name })}
	}
	for _, r := range foreign {
		what := relKinds[r.kind][1]
		if what == "" {
			return fmt.Errorf("postgres: %s.%s (relkind %s) cannot be replaced: drop it yourself or use another %s", c.opts.Schema, r.name, r.kind, KeySchema)
		}
		q := "DROP " + what + " IF EXISTS " + pgx.Identifier{c.opts.Schema, r.name}.Sanitize()
		if _, err := c.primary.Exec(ctx, q); err != nil {
			return fmt.Errorf("postgres: replace %s.%s (%s=true): %w", c.opts.Schema, r.name, engine.ReplaceExistingSpec(Name).Key, Classify(ctx, err))
		}
	}
	return nil
}

// MarkTables leaves scalelab's mark (engine.Mark of the run's scenario and
// name) in the comment of each of tables that exists without one: call it
// right after creating them. A table that already carries a mark keeps it.
func (c *Conn) MarkTables(ctx context.Context, tables ...string) error {
	rels, err := c.relations(ctx, tables)
	if err != nil {
		return fmt.Errorf("postgres: mark tables %s: %w", strings.Join(tables, ", "), Classify(ctx, err))
	}
	mark := engine.Mark(c.scenario, c.run)
	for _, r := range rels {
		if engine.IsMark(r.comment) || relKinds[r.kind][0] != "table" {
			continue
		}
		q := "COMMENT ON TABLE " + pgx.Identifier{c.opts.Schema, r.name}.Sanitize() + " IS " + quoteLiteral(mark)
		if _, err := c.primary.Exec(ctx, q); err != nil {
			return fmt.Errorf("postgres: mark table %s.%s: %w", c.opts.Schema, r.name, Classify(ctx, err))
		}
	}
	return nil
}

// quoteLiteral is s as an SQL string literal (standard_conforming_strings
// is on since PostgreSQL 9.1: only quotes are doubled).
func quoteLiteral(s string) string {
	if strings.Contains(s, `\`) {
		return "E'" + strings.NewReplacer(`\`, `\\`, "'", "''").Replace(s) + "'"
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
