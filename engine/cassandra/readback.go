package cassandra

import (
	"context"
	"fmt"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// ReadBackChunk bounds the values of one IN list in a read-back query.
const ReadBackChunk = 100

// ReadBackScan runs a read-back query (the acknowledged-write audit) and calls row after scanning each
// row into dest. It reads at consistency ALL, which finds a write that any
// replica holds (a write acknowledged at ONE is on at least one replica);
// when that fails (a replica is down) it reads again at the engine's read
// consistency (cassandra.read_consistency).
func (c *Conn) ReadBackScan(ctx context.Context, stmt string, args []any, dest []any, row func()) error {
	err := readBackScan(ctx, c.s.Query(stmt, args...).Consistency(gocql.All), dest, row)
	if err != nil && ctx.Err() == nil {
		err = readBackScan(ctx, c.Read(stmt, args...), dest, row)
	}
	if err != nil {
		return fmt.Errorf("read back: %w", c.Classify(ctx, err))
	}
	return nil
}

func readBackScan(ctx context.Context, q *gocql.Query, dest []any, row func()) error {
	iter := q.IterContext(ctx)
	for iter.Scan(dest...) {
		row()
	}
	return iter.Close()
}
