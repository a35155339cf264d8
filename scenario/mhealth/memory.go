package mhealth

import (
	"github.com/scalelab/scalelab/scenario/kit"

	"context"
	"fmt"
	"strconv"

	"github.com/scalelab/scalelab/engine/memory"
	"github.com/scalelab/scalelab/scenario"
)

// The memory engine keeps one record per patient, activity, plan, totals
// and achievements. Achievements and totals are kept by read-modify-write
// on each post (the natural way in a key-value store without queries):
// the day, week and month sums roll over when a post starts a new period,
// which is exact because a patient's posts arrive in time order.

func init() { openers[memory.Name] = openMemory }

type memoryStore struct{ c *memory.Conn }

func openMemory(_ context.Context, env scenario.Env, _ *config) (store, error) {
	c, err := kit.AsConn[*memory.Conn](env)
	if err != nil {
		return nil, err
	}
	return &memoryStore{c: c}, nil
}

func (m *memoryStore) stores() bool { return true }

func (m *memoryStore) reset(context.Context) error { m.c.Clear(); return nil }

func itoa(v int64) []byte { return strconv.AppendInt(nil, v, 10) }

func atoi(rec memory.Record, k string) int64 {
	v, _ := strconv.ParseInt(string(rec[k]), 10, 64)
	return v
}

func (m *memoryStore) createPatient(ctx context.Context, p Patient) error {
	id := patientKey(p.ID)
	if err := m.c.Put(ctx, "patient/"+id, memory.Record{"created": itoa(p.Created), "daily": itoa(p.Goals.Daily), "weekly": itoa(p.Goals.Weekly), "monthly": itoa(p.Goals.Monthly)}); err != nil {
		return err
	}
	return m.c.Put(ctx, "tot/"+id, memory.Record{"steps": itoa(0)})
}

func (m *memoryStore) goals(ctx context.Context, id string) (Goals, error) {
	rec, err := m.c.Get(ctx, "patient/"+id)
	if err != nil {
		return Goals{}, err
	}
	return Goals{Daily: atoi(rec, "daily"), Weekly: atoi(rec, "weekly"), Monthly: atoi(rec, "monthly")}, nil
}

func (m *memoryStore) postActivity(ctx context.Context, patient int64, a Activity) error {
	id := patientKey(patient)
	if err := m.c.Put(ctx, fmt.Sprintf("act/%s/%015d", id, a.Start), memory.Record{"end": itoa(a.End), "type": []byte(a.Type), "steps": itoa(a.Steps)}); err != nil {
		return err
	}
	ach, err := m.achievements(ctx, patient)
	if err != nil {
		return err
	}
	if ach.Goals, err = m.goals(ctx, id); err != nil {
		return err
	}
	roll := func(sum *int64, oldStart, newStart int64) {
		if oldStart != newStart {
			*sum = 0
		}
		*sum += a.Steps
	}
	prev := ach.UpdatedFor
	roll(&ach.Daily, dayStart(prev), dayStart(a.Start))
	roll(&ach.Weekly, weekStart(prev), weekStart(a.Start))
	roll(&ach.Monthly, monthStart(prev), monthStart(a.Start))
	ach.DayStart, ach.UpdatedFor = dayStart(a.Start), a.Start
	if err := m.c.Put(ctx, "ach/"+id, memory.Record{"day_start": itoa(ach.DayStart), "daily": itoa(ach.Daily), "weekly": itoa(ach.Weekly),
		"monthly": itoa(ach.Monthly), "updated_for": itoa(ach.UpdatedFor)}); err != nil {
		return err
	}
	tot, err := m.totals(ctx, patient)
	if err != nil {
		return err
	}
	return m.c.Put(ctx, "tot/"+id, memory.Record{"steps": itoa(tot + a.Steps)})
}

func (m *memoryStore) achievements(ctx context.Context, patient int64) (Achievements, error) {
	id := patientKey(patient)
	rec, err := m.c.Get(ctx, "ach/"+id)
	if err != nil {
		if _, perr := m.c.Get(ctx, "patient/"+id); perr == nil {
			g, gerr := m.goals(ctx, id)
			return Achievements{Goals: g}, gerr // no post yet
		}
		return Achievements{}, err
	}
	g, err := m.goals(ctx, id)
	if err != nil {
		return Achievements{}, err
	}
	return Achievements{DayStart: atoi(rec, "day_start"), Daily: atoi(rec, "daily"), Weekly: atoi(rec, "weekly"),
		Monthly: atoi(rec, "monthly"), UpdatedFor: atoi(rec, "updated_for"), Goals: g}, nil
}

func (m *memoryStore) totals(ctx context.Context, patient int64) (int64, error) {
	rec, err := m.c.Get(ctx, "tot/"+patientKey(patient))
	if err != nil {
		return 0, err
	}
	return atoi(rec, "steps"), nil
}

func planKey(patient int64, week int) string {
	return fmt.Sprintf("plan/%s/%03d", patientKey(patient), week)
}

func (m *memoryStore) savePlan(ctx context.Context, patient int64, p Plan) error {
	return m.c.Put(ctx, planKey(patient, p.Week), memory.Record{"level": itoa(int64(p.Level)), "exercises": []byte(encodeList(p.Exercises)),
		"education": []byte(encodeList(p.Education)), "xdone": []byte(encodeBools(p.ExerciseDone)), "edone": []byte(encodeBools(p.EducationDone)),
		"answers": []byte(encodeAnswers(p.Answers))})
}

func (m *memoryStore) plan(ctx context.Context, patient int64, week int) (Plan, error) {
	rec, err := m.c.Get(ctx, planKey(patient, week))
	if err != nil {
		return Plan{}, err
	}
	return recordPlan(rec, week), nil
}

// recordPlan decodes the plan of week that savePlan stored as rec.
func recordPlan(rec memory.Record, week int) Plan {
	return Plan{Week: week, Level: int(atoi(rec, "level")), Exercises: decodeList(string(rec["exercises"])), Education: decodeList(string(rec["education"])),
		ExerciseDone: decodeBools(string(rec["xdone"])), EducationDone: decodeBools(string(rec["edone"])), Answers: decodeAnswers(string(rec["answers"]))}
}

func (m *memoryStore) markDone(ctx context.Context, patient int64, week int, kind byte, item int) error {
	p, err := m.plan(ctx, patient, week)
	if err != nil {
		return err
	}
	marks := p.ExerciseDone
	field := "xdone"
	if kind == 'e' {
		marks, field = p.EducationDone, "edone"
	}
	if item < 0 || item >= len(marks) {
		return fmt.Errorf("plan item %d of %d", item, len(marks))
	}
	marks[item] = true
	return m.c.Update(ctx, planKey(patient, week), memory.Record{field: []byte(encodeBools(marks))})
}

func (m *memoryStore) settle(context.Context) error { return nil }
func (m *memoryStore) close() error                 { return nil }
