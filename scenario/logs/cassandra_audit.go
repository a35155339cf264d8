package logs

import (
	"context"
	"fmt"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// casReadBackChunk bounds the partition keys of one IN query.
const casReadBackChunk = 100

// readBack reads the record ids back at consistency ALL, which finds a
// write that any replica holds (a write acknowledged at ONE is on at least
// one); when not every replica is up it falls back to the read
// consistency (cassandra.read_consistency).
func (s *casStore) readBack(ctx context.Context, ids []int64, present []bool) error {
	found := make(map[int64]bool, len(ids))
	q := "SELECT id FROM " + s.logs + " WHERE id IN ?"
	for lo := 0; lo < len(ids); lo += casReadBackChunk {
		chunk := ids[lo:min(lo+casReadBackChunk, len(ids))]
		err := s.scanIDs(ctx, s.c.Session().Query(q, chunk).Consistency(gocql.All), found)
		if err != nil {
			err = s.scanIDs(ctx, s.c.Read(q, chunk), found)
		}
		if err != nil {
			return fmt.Errorf("read back records: %w", s.c.Classify(ctx, err))
		}
	}
	markPresent(ids, present, found)
	return nil
}

func (s *casStore) scanIDs(ctx context.Context, q *gocql.Query, found map[int64]bool) error {
	iter := q.IterContext(ctx)
	var id int64
	for iter.Scan(&id) {
		found[id] = true
	}
	return iter.Close()
}
