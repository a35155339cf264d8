package cassandra

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/scalelab/scalelab/wait"
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
	err := c.awaitIndex(ctx, name)
	var failed *indexFailed
	if errors.As(err, &failed) {
		// a build that failed on a node stays failed ("Please run full
		// index rebuild" in its log): drop and create the index once more
		fmt.Fprintf(wait.Output(ctx), "index %s failed to build on node %s; dropping and creating it once more\n", name, failed.node)
		if err := c.DropIndex(ctx, table, column); err != nil {
			return err
		}
		if err := c.s.Query(q).ExecContext(ctx); err != nil {
			return fmt.Errorf("create index %s: %w", name, c.Classify(ctx, err))
		}
		if err := c.AwaitSchema(ctx); err != nil {
			return err
		}
		err = c.awaitIndex(ctx, name)
	}
	if err != nil {
		return err
	}
	return c.probeIndex(ctx, table, column)
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
	hs, err := c.ringHosts(ctx)
	ids := make([]string, len(hs))
	for i, h := range hs {
		ids[i] = h.id
	}
	return ids, err
}

// host is a node of the ring: its host id and its address, for messages.
type host struct{ id, addr string }

func (c *Conn) ringHosts(ctx context.Context) ([]host, error) {
	var hs []host
	var id gocql.UUID
	var addr net.IP
	if err := c.s.Query("SELECT host_id, broadcast_address FROM system.local").Consistency(gocql.One).ScanContext(ctx, &id, &addr); err != nil {
		return nil, fmt.Errorf("read system.local: %w", c.Classify(ctx, err))
	}
	hs = append(hs, host{id.String(), addr.String()})
	iter := c.s.Query("SELECT host_id, peer FROM system.peers").Consistency(gocql.One).IterContext(ctx)
	for iter.Scan(&id, &addr) {
		hs = append(hs, host{id.String(), addr.String()})
	}
	if err := iter.Close(); err != nil {
		return nil, fmt.Errorf("read system.peers: %w", c.Classify(ctx, err))
	}
	return hs, nil
}

// nodeName is "node2 (127.0.0.2)" for a --cluster's node, else its address.
func (c *Conn) nodeName(h host) string {
	if name := c.opts.NodeNames[h.addr]; name != "" {
		return name + " (" + h.addr + ")"
	}
	return h.addr
}

// indexWait is the wait for index name on node h: bounded by
// cassandra.index_wait, announced, naming the node.
func (c *Conn) indexWait(what string, h host) wait.For {
	return wait.For{What: fmt.Sprintf("%s on node %s, host id %s", what, c.nodeName(h), h.id), Bound: c.opts.IndexWait, Setting: KeyIndexWait,
		Hint: fmt.Sprintf("see that node's log and scalelab cluster status (a node short of heap builds slowly or dies: a larger --heap); raise %s, or run with logs.indexes=off (no indexes)", KeyIndexWait)}
}

// probeValue is a value of a column's CQL type, and whether to match it
// with CONTAINS (collections); ok is false for types it does not know.
func probeValue(cqlType string) (v any, contains, ok bool) {
	if inner, found := strings.CutPrefix(cqlType, "set<"); found {
		v, _, ok = probeValue(strings.TrimSuffix(inner, ">"))
		return v, true, ok
	}
	if inner, found := strings.CutPrefix(cqlType, "list<"); found {
		v, _, ok = probeValue(strings.TrimSuffix(inner, ">"))
		return v, true, ok
	}
	switch cqlType {
	case "text", "varchar", "ascii":
		return "", false, true
	case "int":
		return int32(0), false, true
	case "bigint", "counter":
		return int64(0), false, true
	case "smallint":
		return int16(0), false, true
	case "tinyint":
		return int8(0), false, true
	case "double":
		return float64(0), false, true
	case "float":
		return float32(0), false, true
	case "boolean":
		return false, false, true
	}
	return nil, false, false
}

// probeIndex queries through the index at consistency ALL with every node
// as coordinator until none refuses it: a node that built its index tells
// the others by gossip, and until a coordinator has heard, it answers
// INDEX_NOT_AVAILABLE. Columns of types probeValue does not know are not
// probed.
func (c *Conn) probeIndex(ctx context.Context, table, column string) error {
	var cqlType string
	err := c.s.Query("SELECT type FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ? AND column_name = ?",
		c.opts.Keyspace, table, column).Consistency(gocql.One).ScanContext(ctx, &cqlType)
	if err != nil {
		return fmt.Errorf("index on %s.%s: column type: %w", table, column, c.Classify(ctx, err))
	}
	v, contains, ok := probeValue(cqlType)
	if !ok {
		return nil
	}
	op := "="
	if contains {
		op = "CONTAINS"
	}
	q := fmt.Sprintf("SELECT %s FROM %s WHERE %s %s ? LIMIT 1", column, c.Table(table), column, op)
	hs, err := c.ringHosts(ctx)
	if err != nil {
		return err
	}
	for _, h := range hs {
		f := c.indexWait(fmt.Sprintf("the index on %s.%s to answer queries", table, column), h)
		f.Every = 200 * time.Millisecond
		err := f.Poll(ctx, func(ctx context.Context) (bool, string, error) {
			err := c.s.Query(q, v).Consistency(gocql.All).SetHostID(h.id).IterContext(ctx).Close()
			switch {
			case err == nil:
				return true, "", nil
			case strings.Contains(err.Error(), "INDEX_NOT_AVAILABLE"):
				return false, "index not available at this coordinator yet", nil
			}
			return false, "", c.Classify(ctx, err)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// failedGrace is how long an index may be neither building nor queryable
// on a node before its build counts as failed (between its creation and
// the start of its build it is briefly in that state too).
var failedGrace = 30 * time.Second

// indexFailed is the error of an index whose build failed on a node.
type indexFailed struct{ index, node string }

func (e *indexFailed) Error() string {
	return fmt.Sprintf("the build of index %s failed on node %s (neither building nor queryable for %s; its log says why: \"Index build of %s failed\")",
		e.index, e.node, failedGrace, e.index)
}

// awaitIndex polls every node's system_views.sai_column_indexes until the
// index is queryable and not building there; an index neither building nor
// queryable for failedGrace is an *indexFailed.
func (c *Conn) awaitIndex(ctx context.Context, name string) error {
	hs, err := c.ringHosts(ctx)
	if err != nil {
		return err
	}
	for _, h := range hs {
		f := c.indexWait("index "+name, h)
		f.Every = 100 * time.Millisecond
		var idle time.Time // since when neither building nor queryable
		err := f.Poll(ctx, func(ctx context.Context) (bool, string, error) {
			var queryable, building bool
			err := c.s.Query("SELECT is_queryable, is_building FROM system_views.sai_column_indexes WHERE keyspace_name = ? AND index_name = ?",
				c.opts.Keyspace, name).Consistency(gocql.One).SetHostID(h.id).ScanContext(ctx, &queryable, &building)
			switch {
			case err == gocql.ErrNotFound:
				return false, "not yet known to the node", nil
			case err != nil:
				return false, "", c.Classify(ctx, err)
			case building:
				idle = time.Time{}
				return false, "building", nil
			case !queryable:
				if idle.IsZero() {
					idle = time.Now()
				} else if time.Since(idle) >= failedGrace {
					return false, "", &indexFailed{index: name, node: c.nodeName(h)}
				}
				return false, "neither building nor queryable", nil
			}
			return true, "", nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
