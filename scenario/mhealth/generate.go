package mhealth

import (
	"fmt"
	"math/rand/v2"
)

// The deterministic generator: every random choice of a session comes from
// its own seeded source, so a run with the same seed posts the same steps
// and answers the same questions.

// Exercise and education catalogs the rule set picks from.
var (
	exerciseCatalog  = []string{"pelvic-tilt", "bridge", "bird-dog", "cat-cow", "knee-to-chest", "side-plank", "dead-bug", "wall-sit", "hip-flexor-stretch", "hamstring-stretch", "walk-20min", "swim-30min"}
	educationCatalog = []string{"pain-science", "pacing", "sleep", "posture-myths", "flare-ups", "stress", "work-ergonomics", "lifting", "staying-active", "goal-setting"}
	barriers         = []string{"none", "pain", "time", "motivation", "weather"}
)

// DefaultGoals are the step goals of every new patient.
var DefaultGoals = Goals{Daily: 7000, Weekly: 49000, Monthly: 210000}

// hourActivity returns the activity of the simulated hour starting at ms:
// asleep at night, walking by day with the odd run.
func hourActivity(r *rand.Rand, start int64) Activity {
	h := msTime(start).Hour()
	a := Activity{Start: start, End: start + 3600_000}
	switch {
	case h < 7 || h == 23:
		a.Type, a.Steps = Sleeping, int64(r.IntN(25))
	case r.IntN(20) == 0:
		a.Type, a.Steps = Running, 2000+int64(r.IntN(3000))
	default:
		a.Type, a.Steps = Walking, int64(r.IntN(1300))
	}
	return a
}

// nextPlan is the rule set that replaces the study's case-based reasoner
// (out of scope): the exercise level rises after a week with every exercise
// done, little pain and good confidence, and falls after a week with high
// pain or few exercises done; three exercises are drawn at that level; the
// next two unread education items follow, re-offering unread ones first.
func nextPlan(week int, prev *Plan, ans TailoringAnswers) Plan {
	p := Plan{Week: week, Level: 1, Answers: ans}
	if prev != nil {
		p.Level = prev.Level
		done := 0
		for _, d := range prev.ExerciseDone {
			if d {
				done++
			}
		}
		switch {
		case done == len(prev.ExerciseDone) && ans.Pain <= 4 && ans.Confidence >= 6:
			p.Level++
		case ans.Pain >= 8 || done*2 < len(prev.ExerciseDone):
			p.Level--
		}
		p.Level = min(max(p.Level, 1), 5)
	}
	// Exercises: a window into the catalog that moves with the level and
	// the week, so plans differ week to week.
	for i := 0; i < 3; i++ {
		p.Exercises = append(p.Exercises, exerciseCatalog[((p.Level-1)*2+week+i*3)%len(exerciseCatalog)])
	}
	// Education: unread items from last week first, then the next ones.
	if prev != nil {
		for i, d := range prev.EducationDone {
			if !d && len(p.Education) < 2 {
				p.Education = append(p.Education, prev.Education[i])
			}
		}
	}
	for i := 0; len(p.Education) < 2; i++ {
		item := educationCatalog[(week*2+i)%len(educationCatalog)]
		if !contains(p.Education, item) {
			p.Education = append(p.Education, item)
		}
	}
	p.ExerciseDone = make([]bool, len(p.Exercises))
	p.EducationDone = make([]bool, len(p.Education))
	return p
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// answers draws a patient's tailoring answers at a week's end.
func answers(r *rand.Rand) TailoringAnswers {
	return TailoringAnswers{Pain: r.IntN(11), Confidence: r.IntN(11), Barrier: barriers[r.IntN(len(barriers))]}
}

// patientKey names a patient in key-value and document stores.
func patientKey(id int64) string { return fmt.Sprintf("%012d", id) }
