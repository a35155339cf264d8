package mhealth

import (
	"fmt"
	"strings"
	"time"
)

// The data model of the self-management backend. Times are simulated: a
// session's clock starts on Monday Epoch and moves an hour per iteration,
// without real waiting, and that simulated time is what the data holds.

// Epoch is the simulated start of every patient's first week: a Monday, one
// year before the study's reference year, fixed so that runs with the same
// seed write the same data.
var Epoch = time.Date(2025, time.January, 6, 0, 0, 0, 0, time.UTC)

// Activity types.
const (
	Walking  = "walking"
	Sleeping = "sleeping"
	Running  = "running"
)

// Activity is one posted hour of activity. Its id is the start timestamp
// (as in the study), unique per patient.
type Activity struct {
	Start int64  // ms since the Unix epoch (simulated)
	End   int64  // ms
	Type  string // walking, sleeping or running
	Steps int64
}

// Goals are a patient's step goals, set at creation.
type Goals struct {
	Daily, Weekly, Monthly int64
}

// Patient is a registered patient.
type Patient struct {
	ID      int64
	Created int64 // ms, simulated
	Goals   Goals
}

// Achievements are the step sums of the day, the week (Monday to Sunday)
// and the calendar month of the patient's latest activity, recomputed on
// every post, with the goals they are measured against.
type Achievements struct {
	DayStart   int64 // ms: the day the sums refer to
	Daily      int64
	Weekly     int64
	Monthly    int64
	Goals      Goals
	UpdatedFor int64 // ms: start of the activity that last updated them
}

// Met reports which goals the sums reach.
func (a Achievements) Met() (daily, weekly, monthly bool) {
	return a.Daily >= a.Goals.Daily, a.Weekly >= a.Goals.Weekly, a.Monthly >= a.Goals.Monthly
}

// Plan is a patient's plan for one week: exercises and education items
// chosen by the rule set from the previous week's answers, the done marks
// set during the week, and the answers to the tailoring questions that
// produced it.
type Plan struct {
	Week          int
	Level         int      // exercise difficulty, 1..5
	Exercises     []string // exercise ids
	Education     []string // education item ids
	ExerciseDone  []bool
	EducationDone []bool
	Answers       TailoringAnswers // the answers this plan was built from
}

// TailoringAnswers are a patient's answers at the end of a week.
type TailoringAnswers struct {
	Pain       int // 0..10
	Confidence int // 0..10
	Barrier    string
}

// Tailoring questions asked at every week's end.
var TailoringQuestions = []string{
	"How strong was your back pain this week (0-10)?",
	"How confident are you that you can keep exercising (0-10)?",
	"What kept you from exercising?",
}

// encodeBools and decodeBools store done marks as "0101".
func encodeBools(b []bool) string {
	var s strings.Builder
	for _, v := range b {
		if v {
			s.WriteByte('1')
		} else {
			s.WriteByte('0')
		}
	}
	return s.String()
}

func decodeBools(s string) []bool {
	out := make([]bool, len(s))
	for i := range s {
		out[i] = s[i] == '1'
	}
	return out
}

func encodeList(items []string) string { return strings.Join(items, ",") }

func decodeList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func encodeAnswers(a TailoringAnswers) string {
	return fmt.Sprintf("%d;%d;%s", a.Pain, a.Confidence, a.Barrier)
}

func decodeAnswers(s string) TailoringAnswers {
	var a TailoringAnswers
	parts := strings.SplitN(s, ";", 3)
	if len(parts) == 3 {
		fmt.Sscan(parts[0], &a.Pain)
		fmt.Sscan(parts[1], &a.Confidence)
		a.Barrier = parts[2]
	}
	return a
}

// Calendar helpers on simulated milliseconds (UTC).

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// dayStart returns the start of the UTC day holding ms.
func dayStart(ms int64) int64 {
	t := msTime(ms)
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC).UnixMilli()
}

// weekStart returns the start of the Monday-based week holding ms.
func weekStart(ms int64) int64 {
	t := msTime(dayStart(ms))
	back := (int(t.Weekday()) + 6) % 7 // days since Monday
	return t.AddDate(0, 0, -back).UnixMilli()
}

// monthStart returns the start of the calendar month holding ms.
func monthStart(ms int64) int64 {
	t := msTime(ms)
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC).UnixMilli()
}

// periodSums are the achievements' sums computed from a list of activities:
// the independent computation the integrity check compares with.
func periodSums(acts []Activity, at int64) (daily, weekly, monthly int64) {
	d, w, m := dayStart(at), weekStart(at), monthStart(at)
	for _, a := range acts {
		if a.Start > at {
			continue
		}
		if a.Start >= d {
			daily += a.Steps
		}
		if a.Start >= w {
			weekly += a.Steps
		}
		if a.Start >= m {
			monthly += a.Steps
		}
	}
	return daily, weekly, monthly
}

// nonNil returns s, or an empty slice for nil (stores that keep lists
// tell an empty list from none).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
