package logs

import (
	"context"
)

// store is what a storage file implements for one engine. Its methods are
// safe for concurrent use; records passed in are only valid during the
// call.
type store interface {
	// insert writes one record (to the primary, where there are replicas).
	insert(ctx context.Context, r *Record) error
	// insertBatch writes records in bulk (COPY, multi-row inserts...).
	insertBatch(ctx context.Context, rs []Record) error
	// finishLoad creates the secondary indexes (indexes) or drops them,
	// refreshes the planner's statistics and returns once every replica
	// has what the primary has.
	finishLoad(ctx context.Context, indexes bool) error
	// existing returns how many records with ids >= 0 the table holds and
	// the highest such id plus one.
	existing(ctx context.Context) (count, next int64, err error)
	// deleteFresh removes the records of earlier freshness probes (ids < 0).
	deleteFresh(ctx context.Context) error
	// newView returns the view of one user (one session).
	newView() view
	// close releases what the store holds (not the engine connection).
	close() error
}

// view is one user's access to the store: where there are read replicas it
// routes the user's reads (read-your-writes). Each query also reports
// whether it was answered by the primary, which has every acknowledged
// write. A view is used by one goroutine.
type view interface {
	// wrote tells the view that the user just wrote.
	wrote()
	// read fetches record id into r; found is false when there is none.
	read(ctx context.Context, id int64, r *Record) (found, primary bool, err error)
	countA(ctx context.Context, ts int64) (n int64, primary bool, err error)
	countB(ctx context.Context, ts int64, machine string) (n int64, primary bool, err error)
	countC(ctx context.Context, ts int64, service string, severity int) (n int64, primary bool, err error)
	// errorsPerHost counts, per machine, records with from <= timestamp <=
	// to and severity <= maxSeverity, into out (machines with no record may
	// be missing).
	errorsPerHost(ctx context.Context, from, to int64, maxSeverity int, out map[string]int64) (primary bool, err error)
	// search counts records whose message holds word as a whole word.
	search(ctx context.Context, word string) (n int64, primary bool, err error)
	// countVisible counts records with timestamp ts as another user (one
	// who wrote nothing) would see them: a freshness probe's query.
	countVisible(ctx context.Context, ts int64) (int64, error)
}

// sqlRows are a query's rows on the SQL engines (database/sql's and pgx's).
type sqlRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// scanHostCounts sets out[machine] to the count of each (machine, count)
// row of an errors_per_host query.
func scanHostCounts(rows sqlRows, out map[string]int64) error {
	for rows.Next() {
		var m string
		var n int64
		if err := rows.Scan(&m, &n); err != nil {
			return err
		}
		out[m] = n
	}
	return rows.Err()
}
