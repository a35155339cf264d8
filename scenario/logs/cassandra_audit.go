package logs

import (
	"context"

	"github.com/scalelab/scalelab/engine/cassandra"
)

// readBack reads the record ids back at consistency ALL (falling back to
// the read consistency when a replica is down), at most
// cassandra.ReadBackChunk partition keys per query.
func (s *casStore) readBack(ctx context.Context, ids []int64, present []bool) error {
	found := make(map[int64]bool, len(ids))
	var id int64
	for lo := 0; lo < len(ids); lo += cassandra.ReadBackChunk {
		chunk := ids[lo:min(lo+cassandra.ReadBackChunk, len(ids))]
		if err := s.c.ReadBackScan(ctx, "SELECT id FROM "+s.logs+" WHERE id IN ?", []any{chunk}, []any{&id}, func() { found[id] = true }); err != nil {
			return err
		}
	}
	markPresent(ids, present, found)
	return nil
}
