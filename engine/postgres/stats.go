package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// SampleStats reports the primary's pg_stat_database counters for the
// connected database ("pg.xact_commit", "pg.blks_read", "pg.deadlocks",
// ...), its backends by state ("pg.backends.active") and its active
// backends by wait event type ("pg.wait.lock", "pg.wait.io"; "pg.wait.cpu"
// for those waiting on nothing), and each replica's the same way under
// "pg.replicaN.".
func (c *Conn) SampleStats(ctx context.Context) (map[string]float64, error) {
	out := map[string]float64{}
	if err := sampleServer(ctx, c.primary, "pg.", out); err != nil {
		return nil, fmt.Errorf("sample postgres stats: %w", err)
	}
	for i, r := range c.replicas {
		if err := sampleServer(ctx, r, fmt.Sprintf("pg.replica%d.", i+1), out); err != nil {
			return out, fmt.Errorf("sample postgres stats of replica %d: %w", i+1, err)
		}
	}
	return out, nil
}

// sampleServer adds one server's figures under prefix.
func sampleServer(ctx context.Context, p *pgxpool.Pool, prefix string, out map[string]float64) error {
	var commit, rollback, hit, read, temp, deadlocks, ret, ins, upd, del int64
	err := p.QueryRow(ctx, `SELECT xact_commit, xact_rollback, blks_hit, blks_read, temp_bytes, deadlocks,
		tup_returned, tup_inserted, tup_updated, tup_deleted FROM pg_stat_database WHERE datname = current_database()`).
		Scan(&commit, &rollback, &hit, &read, &temp, &deadlocks, &ret, &ins, &upd, &del)
	if err != nil {
		return fmt.Errorf("pg_stat_database: %w", err)
	}
	for k, v := range map[string]int64{"xact_commit": commit, "xact_rollback": rollback, "blks_hit": hit, "blks_read": read,
		"temp_bytes": temp, "deadlocks": deadlocks, "tup_returned": ret, "tup_inserted": ins, "tup_updated": upd, "tup_deleted": del} {
		out[prefix+k] = float64(v)
	}
	for _, s := range []string{"active", "idle", "idle_in_transaction"} {
		out[prefix+"backends."+s] = 0
	}
	rows, err := p.Query(ctx, `SELECT coalesce(state, ''), coalesce(wait_event_type, ''), count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' GROUP BY 1, 2`)
	if err != nil {
		return fmt.Errorf("pg_stat_activity: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var state, wait string
		var n int64
		if err := rows.Scan(&state, &wait, &n); err != nil {
			return fmt.Errorf("pg_stat_activity: %w", err)
		}
		state = strings.NewReplacer(" ", "_", "(", "", ")", "").Replace(state)
		if state != "" {
			out[prefix+"backends."+state] += float64(n)
		}
		if state == "active" {
			if wait == "" {
				wait = "cpu"
			}
			out[prefix+"wait."+strings.ToLower(wait)] += float64(n)
		}
	}
	return rows.Err()
}
