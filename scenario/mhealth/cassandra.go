package mhealth

import (
	"context"
	"errors"
	"fmt"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/cassandra"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/kit"
)

// On Cassandra a post is what a Cassandra application does without
// transactions: upsert the activity (a row of the patient's partition,
// clustered by start), read the partition's activities since the start of
// the week or month (whichever is earlier) and sum them in the client,
// upsert the achievements, and add the steps to a counter. Each statement
// runs at the engine's consistency levels; with reads and writes that
// overlap (QUORUM/QUORUM) a session reads its own writes. A plan's done
// flags are lists of booleans, one element set per markDone.

func init() { openers[cassandra.Name] = openCassandra }

var casTables = [][2]string{
	{"mh_patient", "id bigint PRIMARY KEY, created bigint, goal_daily bigint, goal_weekly bigint, goal_monthly bigint"},
	{"mh_activity", "patient bigint, start bigint, end bigint, type text, steps bigint, PRIMARY KEY ((patient), start)"},
	{"mh_achievements", "patient bigint PRIMARY KEY, day_start bigint, daily bigint, weekly bigint, monthly bigint, updated_for bigint"},
	{"mh_totals", "patient bigint PRIMARY KEY, steps counter"},
	{"mh_plan", "patient bigint, week int, level int, exercises text, education text, xdone list<boolean>, edone list<boolean>, answers text, PRIMARY KEY ((patient), week)"},
}

type casStore struct {
	c *cassandra.Conn
	t map[string]string // table name -> keyspace.table
}

func openCassandra(ctx context.Context, env scenario.Env, _ *config) (store, error) {
	c, err := kit.AsConn[*cassandra.Conn](env)
	if err != nil {
		return nil, err
	}
	s := &casStore{c: c, t: map[string]string{}}
	names := make([]string, len(casTables))
	for i, t := range casTables {
		names[i] = t[0]
	}
	if err := c.Claim(ctx, names...); err != nil {
		return nil, err
	}
	for _, t := range casTables {
		if err := c.CreateTable(ctx, t[0], t[1]); err != nil {
			return nil, err
		}
		s.t[t[0]] = c.Table(t[0])
	}
	return s, nil
}

func (s *casStore) stores() bool { return true }

// casNotFound makes gocql's "not found" the scenario's ErrNotFound (the
// engine classifies its other errors).
func casNotFound(err error) error {
	if errors.Is(err, gocql.ErrNotFound) {
		return engine.ErrNotFound
	}
	return err
}

func (s *casStore) reset(ctx context.Context) error {
	for _, t := range casTables {
		if err := s.c.Truncate(ctx, t[0]); err != nil {
			return err
		}
	}
	return nil
}

func (s *casStore) createPatient(ctx context.Context, p Patient) error {
	err := s.c.Write("INSERT INTO "+s.t["mh_patient"]+" (id, created, goal_daily, goal_weekly, goal_monthly) VALUES (?, ?, ?, ?, ?)",
		p.ID, p.Created, p.Goals.Daily, p.Goals.Weekly, p.Goals.Monthly).ExecContext(ctx)
	return casNotFound(err)
}

func (s *casStore) postActivity(ctx context.Context, patient int64, a Activity) error {
	err := s.c.Write("INSERT INTO "+s.t["mh_activity"]+" (patient, start, end, type, steps) VALUES (?, ?, ?, ?, ?)",
		patient, a.Start, a.End, a.Type, a.Steps).ExecContext(ctx)
	if err != nil {
		return casNotFound(err)
	}
	d, w, m := dayStart(a.Start), weekStart(a.Start), monthStart(a.Start)
	var daily, weekly, monthly, start, steps int64
	iter := s.c.Read("SELECT start, steps FROM "+s.t["mh_activity"]+" WHERE patient = ? AND start >= ? AND start <= ?",
		patient, min(w, m), a.Start).IterContext(ctx)
	for iter.Scan(&start, &steps) {
		if start >= d {
			daily += steps
		}
		if start >= w {
			weekly += steps
		}
		if start >= m {
			monthly += steps
		}
	}
	if err := iter.Close(); err != nil {
		return casNotFound(err)
	}
	err = s.c.Write("INSERT INTO "+s.t["mh_achievements"]+" (patient, day_start, daily, weekly, monthly, updated_for) VALUES (?, ?, ?, ?, ?, ?)",
		patient, d, daily, weekly, monthly, a.Start).ExecContext(ctx)
	if err != nil {
		return casNotFound(err)
	}
	// A counter update is not idempotent: the engine never retries.
	err = s.c.Write("UPDATE "+s.t["mh_totals"]+" SET steps = steps + ? WHERE patient = ?", a.Steps, patient).ExecContext(ctx)
	return casNotFound(err)
}

func (s *casStore) achievements(ctx context.Context, patient int64) (Achievements, error) {
	var a Achievements
	err := s.c.Read("SELECT goal_daily, goal_weekly, goal_monthly FROM "+s.t["mh_patient"]+" WHERE id = ?", patient).
		ScanContext(ctx, &a.Goals.Daily, &a.Goals.Weekly, &a.Goals.Monthly)
	if err != nil {
		return Achievements{}, casNotFound(err)
	}
	err = s.c.Read("SELECT day_start, daily, weekly, monthly, updated_for FROM "+s.t["mh_achievements"]+" WHERE patient = ?", patient).
		ScanContext(ctx, &a.DayStart, &a.Daily, &a.Weekly, &a.Monthly, &a.UpdatedFor)
	if err != nil && !errors.Is(err, gocql.ErrNotFound) { // no post yet: zero sums
		return Achievements{}, casNotFound(err)
	}
	return a, nil
}

// totals reads the counter; a patient who never posted has none (0), a
// patient who does not exist is not found.
func (s *casStore) totals(ctx context.Context, patient int64) (int64, error) {
	var steps int64
	err := s.c.Read("SELECT steps FROM "+s.t["mh_totals"]+" WHERE patient = ?", patient).ScanContext(ctx, &steps)
	if errors.Is(err, gocql.ErrNotFound) {
		var id int64
		if err := s.c.Read("SELECT id FROM "+s.t["mh_patient"]+" WHERE id = ?", patient).ScanContext(ctx, &id); err != nil {
			return 0, casNotFound(err)
		}
		return 0, nil
	}
	return steps, casNotFound(err)
}

func (s *casStore) savePlan(ctx context.Context, patient int64, p Plan) error {
	err := s.c.Write("INSERT INTO "+s.t["mh_plan"]+" (patient, week, level, exercises, education, xdone, edone, answers) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		patient, p.Week, p.Level, encodeList(p.Exercises), encodeList(p.Education), nonNil(p.ExerciseDone), nonNil(p.EducationDone),
		encodeAnswers(p.Answers)).ExecContext(ctx)
	return casNotFound(err)
}

// nonNil keeps an empty list an empty list (a nil slice writes null).

func (s *casStore) plan(ctx context.Context, patient int64, week int) (Plan, error) {
	p := Plan{Week: week}
	var ex, ed, ans string
	err := s.c.Read("SELECT level, exercises, education, xdone, edone, answers FROM "+s.t["mh_plan"]+" WHERE patient = ? AND week = ?", patient, week).
		ScanContext(ctx, &p.Level, &ex, &ed, &p.ExerciseDone, &p.EducationDone, &ans)
	if err != nil {
		return Plan{}, casNotFound(err)
	}
	p.Exercises, p.Education, p.Answers = decodeList(ex), decodeList(ed), decodeAnswers(ans)
	p.ExerciseDone = padBools(p.ExerciseDone, len(p.Exercises))
	p.EducationDone = padBools(p.EducationDone, len(p.Education))
	return p, nil
}

// padBools returns b with n elements (an empty list reads as nil).
func padBools(b []bool, n int) []bool {
	if len(b) >= n {
		return b
	}
	return append(b, make([]bool, n-len(b))...)
}

// markDone reads the plan's flags (not found when the plan or the item
// does not exist) and sets one list element.
func (s *casStore) markDone(ctx context.Context, patient int64, week int, kind byte, item int) error {
	col := "xdone"
	if kind == 'e' {
		col = "edone"
	}
	var flags []bool
	err := s.c.Read("SELECT "+col+" FROM "+s.t["mh_plan"]+" WHERE patient = ? AND week = ?", patient, week).ScanContext(ctx, &flags)
	if errors.Is(err, gocql.ErrNotFound) || (err == nil && item >= len(flags)) {
		return fmt.Errorf("%w: plan item %d of week %d of patient %d", engine.ErrNotFound, item, week, patient)
	}
	if err != nil {
		return casNotFound(err)
	}
	err = s.c.Write("UPDATE "+s.t["mh_plan"]+" SET "+col+"[?] = true WHERE patient = ? AND week = ?", item, patient, week).ExecContext(ctx)
	return casNotFound(err)
}

// settle has nothing to wait for: reads at the configured levels see what
// they see at once (with QUORUM/QUORUM, every acknowledged write).
func (s *casStore) settle(context.Context) error { return nil }

func (s *casStore) close() error { return nil }

// readActivities reports which activities the store holds (the audit's
// read-back), one partition-and-row lookup each at the read consistency.
func (s *casStore) readActivities(ctx context.Context, ids []int64, present []bool) error {
	for i, id := range ids {
		p, start := splitActivityID(id)
		var got int64
		err := s.c.Read("SELECT start FROM "+s.t["mh_activity"]+" WHERE patient = ? AND start = ?", p, start).ScanContext(ctx, &got)
		switch {
		case errors.Is(err, gocql.ErrNotFound):
			present[i] = false
		case err != nil:
			return fmt.Errorf("read back activities: %w", err)
		default:
			present[i] = true
		}
	}
	return nil
}
