package readback

import (
	"context"
	"fmt"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/scalelab/scalelab/engine/cassandra"
)

// CassandraChunk bounds the values of one IN list in a read-back query.
const CassandraChunk = 100

// CassandraScan runs a read-back query and calls row after scanning each
// row into dest. It reads at consistency ALL, which finds a write that any
// replica holds (a write acknowledged at ONE is on at least one replica);
// when that fails (a replica is down) it reads again at the engine's read
// consistency (cassandra.read_consistency).
func CassandraScan(ctx context.Context, c *cassandra.Conn, stmt string, args []any, dest []any, row func()) error {
	err := cassandraScan(ctx, c.Session().Query(stmt, args...).Consistency(gocql.All), dest, row)
	if err != nil && ctx.Err() == nil {
		err = cassandraScan(ctx, c.Read(stmt, args...), dest, row)
	}
	if err != nil {
		return fmt.Errorf("read back: %w", c.Classify(ctx, err))
	}
	return nil
}

func cassandraScan(ctx context.Context, q *gocql.Query, dest []any, row func()) error {
	iter := q.IterContext(ctx)
	for iter.Scan(dest...) {
		row()
	}
	return iter.Close()
}
