package logs

import (
	"context"

	"github.com/scalelab/scalelab/scenario/readback"
)

// readBack reads the record ids back at consistency ALL (falling back to
// the read consistency when a replica is down), at most
// readback.CassandraChunk partition keys per query.
func (s *casStore) readBack(ctx context.Context, ids []int64, present []bool) error {
	found := make(map[int64]bool, len(ids))
	var id int64
	for lo := 0; lo < len(ids); lo += readback.CassandraChunk {
		chunk := ids[lo:min(lo+readback.CassandraChunk, len(ids))]
		if err := readback.CassandraScan(ctx, s.c, "SELECT id FROM "+s.logs+" WHERE id IN ?", []any{chunk}, []any{&id}, func() { found[id] = true }); err != nil {
			return err
		}
	}
	markPresent(ids, present, found)
	return nil
}
