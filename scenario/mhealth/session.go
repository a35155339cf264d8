package mhealth

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/scalelab/scalelab/cache"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/scenario"
)

// Session phases within a week.
const (
	phaseCreate = iota
	phasePlan
	phaseEducation
	phaseExercise
	phaseHour      // activity.post
	phaseTotals    // totals.get after the post
	phaseAchieve   // achievements.get after the post
	phaseTailoring // at the week's end
	phaseDone
)

// Session is one patient living through mhealth.weeks simulated weeks.
type Session struct {
	w  *Workload
	st store
	r  *rand.Rand
	id int64
	ps *patientState

	wlog scenario.WriteLog // acknowledged-write audit (audit.go); nil when off

	phase int
	week  int
	item  int  // education or exercise item within the phase
	hour  int  // hourly iteration within the week
	read  bool // this iteration reads totals and achievements

	op        int      // prepared operation
	act       Activity // prepared post
	plan      Plan     // this week's plan as the patient knows it
	prev      *Plan
	answers   TailoringAnswers
	acts      []Activity // acknowledged posts, for the independent computation
	total     int64
	lastWrite bool          // the previous operation wrote (for wait_after_write)
	step      scenario.Step // how the operation just done belongs to activity.client
}

var (
	_ scenario.Session  = (*Session)(nil)
	_ scenario.Thinker  = (*Session)(nil)
	_ scenario.Composer = (*Session)(nil)
)

func newSession(w *Workload, id int64, seed uint64) *Session {
	s := &Session{w: w, st: w.st, r: rand.New(rand.NewPCG(seed, uint64(id))), id: id, phase: phasePlan}
	if !w.cfg.load || id >= w.cfg.patients {
		s.phase = phaseCreate
	}
	if ss, ok := w.st.(sessionStore); ok {
		s.st = ss.forSession()
	}
	s.ps = w.state(id)
	// A continuing patient (a second session of the same id is not
	// made by the load models) starts from the recorded total.
	s.total = s.ps.total.Load()
	return s
}

// weekStartMs is the simulated Monday of the session's current week.
func (s *Session) weekStartMs() int64 { return Epoch.AddDate(0, 0, 7*s.week).UnixMilli() }

// Next prepares the next request of the patient's weeks.
func (s *Session) Next() (int, bool) {
	for {
		switch s.phase {
		case phaseCreate:
			return s.prepare(OpPatientCreate)
		case phasePlan:
			return s.prepare(OpPlanNext)
		case phaseEducation:
			if s.pickItem(len(s.plan.Education), 0.8) { // most items get read
				return s.prepare(OpEducationUpdate)
			}
			s.phase, s.item = phaseExercise, 0
		case phaseExercise:
			if s.pickItem(len(s.plan.Exercises), 0.7) {
				return s.prepare(OpExerciseUpdate)
			}
			s.phase, s.hour = phaseHour, 0
		case phaseHour:
			if s.hour >= s.w.cfg.hours {
				s.phase = phaseTailoring
				continue
			}
			s.act = hourActivity(s.r, s.weekStartMs()+int64(s.hour)*3600_000)
			s.read = s.r.Float64() < s.w.cfg.readProb
			return s.prepare(OpActivityPost)
		case phaseTotals:
			return s.prepare(OpTotalsGet)
		case phaseAchieve:
			return s.prepare(OpAchievementsGet)
		case phaseTailoring:
			return s.prepare(OpPlanTailoring)
		case phaseDone:
			return 0, false
		}
	}
}

// prepare makes op the session's next operation.
func (s *Session) prepare(op int) (int, bool) {
	s.op = op
	return op, true
}

// pickItem moves to the next of the plan's n items (from the current one)
// that the patient acts on, each with probability p, and reports whether
// there is one.
func (s *Session) pickItem(n int, p float64) bool {
	for ; s.item < n; s.item++ {
		if s.r.Float64() < p {
			return true
		}
	}
	return false
}

// Think pauses mhealth.wait_after_write after a write; otherwise the load
// model's think time applies.
func (s *Session) Think() (time.Duration, bool) {
	if s.lastWrite && s.w.cfg.waitAfter > 0 {
		return time.Duration(s.w.cfg.waitAfter), true
	}
	return 0, false
}

// Do performs the prepared request and moves the session on, whatever
// the outcome (a failed request is not retried, as a phone app would not).
func (s *Session) Do(ctx context.Context) error {
	err := s.do(ctx)
	s.lastWrite = s.op == OpActivityPost || s.op == OpPlanNext || s.op == OpExerciseUpdate || s.op == OpEducationUpdate || s.op == OpPatientCreate
	if s.lastWrite && err == nil && s.w.refresh != nil {
		// the study's manual refresh: the client refreshes every index
		// after its write, in the write's time
		if rerr := s.w.refresh.refreshAll(ctx); rerr != nil {
			err = fmt.Errorf("refresh after write: %w", rerr)
		}
	}
	s.step = s.stepOf()
	s.advance()
	if err != nil {
		return fmt.Errorf("mhealth %s patient %d: %w", operationNames[s.op], s.id, err)
	}
	return nil
}

// stepOf says how the operation just done belongs to activity.client: a
// post opens it (or is all of it when no reads follow), the totals read
// continues it and the achievements read closes it.
func (s *Session) stepOf() scenario.Step {
	switch s.op {
	case OpActivityPost:
		if s.read {
			return scenario.Begin
		}
		return scenario.Whole
	case OpTotalsGet:
		return scenario.Within
	case OpAchievementsGet:
		return scenario.End
	}
	return scenario.Outside
}

// Composite reports the step of activity.client the operation just done
// was (scenario.Composer).
func (s *Session) Composite() (int, scenario.Step) { return OpActivityClient, s.step }

func (s *Session) advance() {
	switch s.phase {
	case phaseCreate:
		s.phase = phasePlan
	case phasePlan:
		s.phase, s.item = phaseEducation, 0
	case phaseEducation, phaseExercise:
		s.item++
	case phaseHour:
		if s.read {
			s.phase = phaseTotals
		} else {
			s.hour++
		}
	case phaseTotals:
		s.phase = phaseAchieve
	case phaseAchieve:
		s.phase = phaseHour
		s.hour++
	case phaseTailoring:
		s.week++
		s.phase = phasePlan
		if s.week >= s.w.cfg.weeks {
			s.phase = phaseDone
		}
	}
}

// logPlanItem logs the done mark the session is about to set (what:
// exerciseDone or educationDone) when the audit is on.
func (s *Session) logPlanItem(what int) {
	if s.wlog != nil {
		s.wlog.Writing(planItemID(s.id, s.week, what, s.item), 1)
	}
}

func (s *Session) do(ctx context.Context) error {
	switch s.op {
	case OpPatientCreate:
		return s.st.createPatient(ctx, Patient{ID: s.id, Created: s.weekStartMs(), Goals: DefaultGoals})
	case OpPlanNext:
		return s.planNext(ctx)
	case OpEducationUpdate:
		return s.markDone(ctx, educationDone, 'e', s.plan.EducationDone)
	case OpExerciseUpdate:
		return s.markDone(ctx, exerciseDone, 'x', s.plan.ExerciseDone)
	case OpActivityPost:
		return s.post(ctx)
	case OpTotalsGet:
		got, err := s.st.totals(ctx, s.id)
		if err != nil {
			return err
		}
		return s.compare(OpTotalsGet, got, s.total, "total")
	case OpAchievementsGet:
		a, err := s.st.achievements(ctx, s.id)
		if err != nil {
			return err
		}
		return s.checkAchievements(a)
	case OpPlanTailoring:
		return s.tailoring(ctx)
	}
	return fmt.Errorf("unknown operation %d", s.op)
}

// markDone marks the session's item of the week's plan done: what is
// educationDone or exerciseDone, kind its letter in the store, done the
// plan's marks of that kind.
func (s *Session) markDone(ctx context.Context, what int, kind byte, done []bool) error {
	s.logPlanItem(what)
	if err := s.st.markDone(ctx, s.id, s.week, kind, s.item); err != nil {
		return err
	}
	done[s.item] = true
	return nil
}

func (s *Session) post(ctx context.Context) error {
	s.ps.pending.Add(1)
	if s.wlog != nil {
		s.wlog.Writing(activityID(s.id, s.act.Start), 1)
	}
	err := s.st.postActivity(ctx, s.id, s.act)
	if err != nil {
		s.ps.unknown.Store(true) // it may have been applied anyway
	} else {
		s.acts = append(s.acts, s.act)
		s.total += s.act.Steps
		s.ps.total.Add(s.act.Steps)
	}
	s.ps.pending.Add(-1)
	return err
}

func (s *Session) planNext(ctx context.Context) error {
	var prev *Plan
	if s.week > 0 {
		p, err := s.st.plan(ctx, s.id, s.week-1)
		switch {
		case errors.Is(err, engine.ErrNotFound) && !s.w.cfg.verify:
		case err != nil && !errors.Is(err, engine.ErrNotFound):
			return err
		case err == nil:
			if s.w.cfg.verify {
				if err := s.samePlan(OpPlanNext, p); err != nil {
					return err
				}
			}
			prev = &p
		}
		if prev == nil {
			prev = s.prev
		}
	}
	p := nextPlan(s.week, prev, s.answers)
	if s.wlog != nil {
		s.wlog.Writing(planItemID(s.id, p.Week, planSaved, 0), 1)
	}
	if err := s.st.savePlan(ctx, s.id, p); err != nil {
		return err
	}
	s.prev = nil
	s.plan = p
	return nil
}

func (s *Session) tailoring(ctx context.Context) error {
	p, err := s.st.plan(ctx, s.id, s.week)
	if err != nil && !(errors.Is(err, engine.ErrNotFound) && !s.w.cfg.verify) {
		return err
	}
	if err == nil && s.w.cfg.verify {
		if err := s.samePlan(OpPlanTailoring, p); err != nil {
			return err
		}
	}
	// The patient answers the week's questions; the answers go with the
	// next plan request.
	s.answers = answers(s.r)
	cp := s.plan
	s.prev = &cp
	return nil
}

// samePlan compares a stored plan with the one the patient built and
// marked: fewer done marks than the patient set is a stale read, anything
// else different is wrong data.
func (s *Session) samePlan(op int, p Plan) error {
	want := s.plan
	if p.Week != want.Week || encodeList(p.Exercises) != encodeList(want.Exercises) || encodeList(p.Education) != encodeList(want.Education) || p.Level != want.Level {
		return fmt.Errorf("%w: plan of week %d reads back as level %d %v %v, saved level %d %v %v", engine.ErrIntegrity, want.Week, p.Level, p.Exercises, p.Education, want.Level, want.Exercises, want.Education)
	}
	missing := false
	for _, pair := range [][2][]bool{{p.ExerciseDone, want.ExerciseDone}, {p.EducationDone, want.EducationDone}} {
		got, exp := pair[0], pair[1]
		if len(got) != len(exp) {
			return fmt.Errorf("%w: plan of week %d has %d done marks, want %d", engine.ErrIntegrity, want.Week, len(got), len(exp))
		}
		for i := range exp {
			if got[i] && !exp[i] {
				return fmt.Errorf("%w: plan of week %d has item %d done that the patient never marked", engine.ErrIntegrity, want.Week, i)
			}
			missing = missing || (exp[i] && !got[i])
		}
	}
	return s.freshness(op, missing, "plan done marks")
}

// compare checks a read value against what the patient's own
// acknowledged writes add up to: less is stale, more is wrong.
func (s *Session) compare(op int, got, want int64, what string) error {
	if !s.w.cfg.verify {
		return nil
	}
	if got > want {
		return fmt.Errorf("%w: %s %d exceeds the %d the patient posted", engine.ErrIntegrity, what, got, want)
	}
	return s.freshness(op, got < want, fmt.Sprintf("%s %d, posted %d", what, got, want))
}

// freshness counts a read as stale or fresh; with require_fresh a stale
// read is an error.
func (s *Session) freshness(op int, stale bool, detail string) error {
	if !stale {
		s.w.fresh[op].Add(1)
		return nil
	}
	s.w.stale[op].Add(1)
	if s.w.cacheMode != "" && s.w.cacheMode != cache.Off {
		s.w.cacheStats.Record(operationNames[op], cache.Event{Stale: true})
	}
	if s.w.cfg.requireFresh {
		return fmt.Errorf("%w: stale read (mhealth.require_fresh): %s", engine.ErrIntegrity, detail)
	}
	return nil
}

func (s *Session) checkAchievements(a Achievements) error {
	if !s.w.cfg.verify || len(s.acts) == 0 {
		return nil
	}
	last := s.acts[len(s.acts)-1].Start
	if a.UpdatedFor < last || a.DayStart < dayStart(last) {
		// The achievements do not yet reflect the latest post.
		return s.freshness(OpAchievementsGet, true, fmt.Sprintf("achievements updated for %d, last post %d", a.UpdatedFor, last))
	}
	if a.UpdatedFor > last {
		return fmt.Errorf("%w: achievements updated for %d, after the last post %d", engine.ErrIntegrity, a.UpdatedFor, last)
	}
	d, w, m := periodSums(s.acts, last)
	if a.Goals != DefaultGoals {
		return fmt.Errorf("%w: achievements goals %+v, want %+v", engine.ErrIntegrity, a.Goals, DefaultGoals)
	}
	if a.Daily > d || a.Weekly > w || a.Monthly > m {
		return fmt.Errorf("%w: achievements day/week/month %d/%d/%d exceed the posted %d/%d/%d", engine.ErrIntegrity, a.Daily, a.Weekly, a.Monthly, d, w, m)
	}
	// Sums computed at post time from an index that did not yet show the
	// earlier posts are smaller: stale, as the study found.
	return s.freshness(OpAchievementsGet, a.Daily < d || a.Weekly < w || a.Monthly < m, fmt.Sprintf("achievements %d/%d/%d, posted %d/%d/%d", a.Daily, a.Weekly, a.Monthly, d, w, m))
}
