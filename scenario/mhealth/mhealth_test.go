package mhealth

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestCalendar(t *testing.T) {
	t.Parallel()
	// Wednesday 2025-01-29 13:00 UTC: week from Monday 27th, month from 1st.
	at := time.Date(2025, 1, 29, 13, 0, 0, 0, time.UTC).UnixMilli()
	if got := msTime(dayStart(at)); !got.Equal(time.Date(2025, 1, 29, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("dayStart %v", got)
	}
	if got := msTime(weekStart(at)); !got.Equal(time.Date(2025, 1, 27, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("weekStart %v", got)
	}
	if got := msTime(monthStart(at)); !got.Equal(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("monthStart %v", got)
	}
	// A week spanning two months: Monday 2025-03-31, Wednesday April 2nd.
	at = time.Date(2025, 4, 2, 10, 0, 0, 0, time.UTC).UnixMilli()
	if msTime(weekStart(at)).Day() != 31 || msTime(monthStart(at)).Day() != 1 {
		t.Error("week spanning months")
	}
	if Epoch.Weekday() != time.Monday {
		t.Error("Epoch must be a Monday")
	}
	acts := []Activity{{Start: time.Date(2025, 3, 31, 9, 0, 0, 0, time.UTC).UnixMilli(), Steps: 10},
		{Start: time.Date(2025, 4, 1, 9, 0, 0, 0, time.UTC).UnixMilli(), Steps: 20},
		{Start: at, Steps: 40}}
	if d, w, m := periodSums(acts, at); d != 40 || w != 70 || m != 60 {
		t.Errorf("periodSums %d %d %d, want 40 70 60", d, w, m)
	}
}

func TestPlanRules(t *testing.T) {
	t.Parallel()
	p0 := nextPlan(0, nil, TailoringAnswers{})
	if p0.Level != 1 || len(p0.Exercises) != 3 || len(p0.Education) != 2 || len(p0.ExerciseDone) != 3 {
		t.Fatalf("first plan %+v", p0)
	}
	all := p0
	all.ExerciseDone = []bool{true, true, true}
	all.EducationDone = []bool{true, false}
	up := nextPlan(1, &all, TailoringAnswers{Pain: 2, Confidence: 8})
	if up.Level != 2 {
		t.Errorf("every exercise done, low pain, confident: level %d, want 2", up.Level)
	}
	if up.Education[0] != all.Education[1] {
		t.Errorf("unread education item %q must be offered again first, got %v", all.Education[1], up.Education)
	}
	down := nextPlan(2, &up, TailoringAnswers{Pain: 9})
	if down.Level != 1 {
		t.Errorf("high pain: level %d, want 1", down.Level)
	}
	floor := nextPlan(3, &down, TailoringAnswers{Pain: 10})
	if floor.Level != 1 {
		t.Errorf("level below 1: %d", floor.Level)
	}
}

func TestActivityDeterministicAndPlausible(t *testing.T) {
	t.Parallel()
	gen := func(seed uint64) []Activity {
		r := rand.New(rand.NewPCG(seed, 7))
		var out []Activity
		for h := 0; h < 24*7; h++ {
			out = append(out, hourActivity(r, Epoch.UnixMilli()+int64(h)*3600_000))
		}
		return out
	}
	a, b := gen(1), gen(1)
	var night, day int64
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("same seed, different activity")
		}
		if h := msTime(a[i].Start).Hour(); h < 7 || h == 23 {
			night += a[i].Steps
			if a[i].Type != Sleeping {
				t.Fatalf("hour %d: %s", h, a[i].Type)
			}
		} else {
			day += a[i].Steps
		}
	}
	if day < 50*night || day/7 < 5000 || day/7 > 20000 {
		t.Errorf("daily steps %d by day, %d by night per week", day/7, night)
	}
}
