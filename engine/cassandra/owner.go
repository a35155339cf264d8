package cassandra

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/scalelab/scalelab/engine"
)

// What scalelab creates in its keyspace carries its mark in the table's
// comment (WITH comment = '<mark>'). A run checks the comments of the
// tables it uses before it drops, truncates, creates or writes into any of
// them (Claim): a table of the same name without the mark is a user's, and
// the run is refused with an engine.NotOwnedError unless
// cassandra.replace_existing is set, in which case Claim drops it. The
// keyspace itself is judged through its tables: scalelab creates it when it
// is missing and never drops it.

// ownerComment is the comment of the tables this connection creates.
func (c *Conn) ownerComment() string {
	if c.opts.Mark != "" {
		return c.opts.Mark
	}
	return engine.Mark("", "")
}

// cqlString quotes s as a CQL string literal.
func cqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Unowned returns those of names (tables of the keyspace) that exist
// without scalelab's mark in their comment.
func (c *Conn) Unowned(ctx context.Context, names ...string) ([]string, error) {
	comments, err := c.tableComments(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if cm, ok := comments[n]; ok && !engine.IsMark(cm) {
			out = append(out, n)
		}
	}
	return out, nil
}

// Claim checks, before anything is written, that none of names (tables of
// the keyspace) exists without scalelab's mark: the first such table is
// refused with an *engine.NotOwnedError (wrapping engine.ErrNotOwned and
// engine.ErrConfig), unless cassandra.replace_existing is set, in which
// case every such table is dropped. A scenario claims all its tables
// before it creates, drops or truncates any.
func (c *Conn) Claim(ctx context.Context, names ...string) error {
	foreign, err := c.Unowned(ctx, names...)
	if err != nil || len(foreign) == 0 {
		return err
	}
	if !c.opts.ReplaceExisting {
		return &engine.NotOwnedError{Engine: Name, Kind: "table", Name: c.Table(foreign[0]), Namespace: KeyKeyspace,
			Also: engine.ObjectNames(foreign[1:], c.Table)}
	}
	for _, n := range foreign {
		if err := c.drop(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// foreignTables names a table of the keyspace that has no scalelab mark
// ("" when every table has one, or there are none): such a keyspace is a
// user's, whose replication a run leaves alone.
func (c *Conn) foreignTables(ctx context.Context) (string, error) {
	comments, err := c.tableComments(ctx)
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(comments))
	for n, cm := range comments {
		if !engine.IsMark(cm) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "", nil
	}
	sort.Strings(names)
	return c.Table(names[0]), nil
}

// tableComments reads the keyspace's tables with their comments.
func (c *Conn) tableComments(ctx context.Context) (map[string]string, error) {
	iter := c.s.Query("SELECT table_name, comment FROM system_schema.tables WHERE keyspace_name = ?", c.opts.Keyspace).
		IterContext(ctx)
	comments := map[string]string{}
	var name, comment string
	for iter.Scan(&name, &comment) {
		comments[name] = comment
	}
	if err := iter.Close(); err != nil {
		return nil, fmt.Errorf("read the tables of keyspace %s: %w", c.opts.Keyspace, c.Classify(ctx, err))
	}
	return comments, nil
}
