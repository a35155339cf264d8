package cassandra

import (
	"context"
	"fmt"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// IndexName is the name CreateIndex gives the index of table.column.
func IndexName(table, column string) string { return table + "_" + column + "_idx" }

// CreateIndex creates a storage-attached index (SAI, Cassandra 5) on
// table.column when missing and waits until it is built and queryable on
// every node (SAI builds in the background; queries fail until then).
// Several SAI indexes of one table answer queries that restrict several
// columns (ts = ? AND machine = ?) without ALLOW FILTERING.
func (c *Conn) CreateIndex(ctx context.Context, table, column string) error {
	name := IndexName(table, column)
	q := fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON %s (%s) USING 'sai'", name, c.Table(table), column)
	if err := c.s.Query(q).ExecContext(ctx); err != nil {
		return fmt.Errorf("create index %s: %w", name, c.Classify(ctx, err))
	}
	if err := c.AwaitSchema(ctx); err != nil {
		return err
	}
	return c.awaitIndex(ctx, name)
}

// DropIndex drops the index CreateIndex made on table.column, if any.
func (c *Conn) DropIndex(ctx context.Context, table, column string) error {
	name := IndexName(table, column)
	if err := c.s.Query(fmt.Sprintf("DROP INDEX IF EXISTS %s.%s", c.opts.Keyspace, name)).ExecContext(ctx); err != nil {
		return fmt.Errorf("drop index %s: %w", name, c.Classify(ctx, err))
	}
	return c.AwaitSchema(ctx)
}

// HostIDs returns the host ids of the ring's nodes (system.local and
// system.peers of the node that answers).
func (c *Conn) HostIDs(ctx context.Context) ([]string, error) {
	var ids []string
	var id gocql.UUID
	if err := c.s.Query("SELECT host_id FROM system.local").Consistency(gocql.One).ScanContext(ctx, &id); err != nil {
		return nil, fmt.Errorf("read system.local: %w", c.Classify(ctx, err))
	}
	ids = append(ids, id.String())
	iter := c.s.Query("SELECT host_id FROM system.peers").Consistency(gocql.One).IterContext(ctx)
	for iter.Scan(&id) {
		ids = append(ids, id.String())
	}
	if err := iter.Close(); err != nil {
		return nil, fmt.Errorf("read system.peers: %w", c.Classify(ctx, err))
	}
	return ids, nil
}

// awaitIndex polls every node's system_views.sai_column_indexes until the
// index is queryable and not building there.
func (c *Conn) awaitIndex(ctx context.Context, name string) error {
	ids, err := c.HostIDs(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		for {
			var queryable, building bool
			err := c.s.Query("SELECT is_queryable, is_building FROM system_views.sai_column_indexes WHERE keyspace_name = ? AND index_name = ?",
				c.opts.Keyspace, name).Consistency(gocql.One).SetHostID(id).ScanContext(ctx, &queryable, &building)
			if err == nil && queryable && !building {
				break
			}
			if err != nil && err != gocql.ErrNotFound {
				return fmt.Errorf("index %s on node %s: %w", name, id, c.Classify(ctx, err))
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("index %s on node %s: not queryable: %w", name, id, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}
