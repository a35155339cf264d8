package mhealth

import (
	"github.com/scalelab/scalelab/scenario/kit"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/scenario"
)

// On OpenSearch and Elasticsearch the backend works as the study's did:
// activity documents (id = start time and patient) in an activity index (shared, or
// one per patient with <engine>.index_layout=per_user; routed by patient
// with <engine>.routing=user); a post indexes the activity, then recomputes
// the achievements with a sum aggregation over the patient's activity and
// stores them as a document; totals.get is a sum aggregation. Searches see
// only refreshed writes, so with the default 1 s refresh a read right after
// a post often misses it (a stale read, as the study found); refresh=true
// (refresh after every write) or wait_for makes them fresh. Plans and
// achievements are read by id (real time). The static data_description
// index (the catalog the plans draw from) is what force_merge merges.

func init() {
	openers[search.OpenSearch] = openSearchStore
	openers[search.Elasticsearch] = openSearchStore
}

const (
	idxPatient      = "mh-patient"
	idxActivity     = "mh-activity"
	idxAchievements = "mh-achievements"
	idxPlan         = "mh-plan"
	idxDescription  = "mh-data-description"
)

var (
	mapPatient      = json.RawMessage(`{"dynamic":false,"properties":{"created":{"type":"long"}}}`)
	mapActivity     = json.RawMessage(`{"dynamic":false,"properties":{"patient":{"type":"keyword"},"start":{"type":"long"},"end":{"type":"long"},"type":{"type":"keyword"},"steps":{"type":"long"}}}`)
	mapAchievements = json.RawMessage(`{"dynamic":false,"properties":{"updated_for":{"type":"long"}}}`)
	mapPlan         = json.RawMessage(`{"dynamic":false,"properties":{"patient":{"type":"keyword"},"week":{"type":"integer"}}}`)
	mapDescription  = json.RawMessage(`{"dynamic":false,"properties":{"item":{"type":"keyword"},"kind":{"type":"keyword"}}}`)
)

type searchStore struct {
	c   *search.Conn
	all string // the pattern of every mhealth index
}

func openSearchStore(ctx context.Context, env scenario.Env, _ *config) (store, error) {
	c, err := kit.AsConn[*search.Conn](env)
	if err != nil {
		return nil, err
	}
	s := &searchStore{c: c, all: c.IndexName("mh-*", "")}
	// every index the scenario uses matches s.all: checked before any is
	// created, written or deleted
	if err := c.Claim(ctx, s.all); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *searchStore) stores() bool { return true }

// activityIndex is the patient's activity index under the layout setting.
func (s *searchStore) activityIndex(id string) string { return s.c.IndexName(idxActivity, id) }

func (s *searchStore) reset(ctx context.Context) error {
	if err := s.c.DeleteIndex(ctx, s.all); err != nil {
		return err
	}
	indices := []struct {
		name string
		m    json.RawMessage
	}{{idxPatient, mapPatient}, {idxAchievements, mapAchievements}, {idxPlan, mapPlan}, {idxDescription, mapDescription}}
	if s.c.Options().Layout != search.LayoutPerUser {
		indices = append(indices, struct {
			name string
			m    json.RawMessage
		}{idxActivity, mapActivity})
	}
	for _, ix := range indices {
		if err := s.c.CreateIndex(ctx, s.c.IndexName(ix.name, ""), ix.m, nil); err != nil {
			return err
		}
	}
	// The static catalog: written once, refreshed, and force-merged to one
	// segment when <engine>.force_merge is set.
	b := &search.BulkBuilder{}
	for kind, items := range map[string][]string{"exercise": exerciseCatalog, "education": educationCatalog} {
		for _, it := range items {
			doc, _ := json.Marshal(map[string]string{"item": it, "kind": kind, "text": "About " + it + ": what to do, how often, and why it helps a sore back."})
			b.Index(s.c.IndexName(idxDescription, ""), it, "", doc)
		}
	}
	if err := s.c.Bulk(ctx, b, true); err != nil {
		return fmt.Errorf("write data_description: %w", err)
	}
	return s.c.AfterLoad(ctx, s.c.IndexName(idxDescription, ""))
}

func (s *searchStore) createPatient(ctx context.Context, p Patient) error {
	id := patientKey(p.ID)
	if s.c.Options().Layout == search.LayoutPerUser {
		if err := s.c.EnsureIndex(ctx, s.activityIndex(id), mapActivity, nil); err != nil {
			return err
		}
	}
	doc, _ := json.Marshal(map[string]int64{"created": p.Created, "daily": p.Goals.Daily, "weekly": p.Goals.Weekly, "monthly": p.Goals.Monthly})
	return s.c.IndexDoc(ctx, s.c.IndexName(idxPatient, ""), id, s.c.RoutingFor(id), doc)
}

func (s *searchStore) goals(ctx context.Context, id string) (Goals, error) {
	raw, err := s.c.GetDoc(ctx, s.c.IndexName(idxPatient, ""), id, s.c.RoutingFor(id), "")
	if err != nil {
		return Goals{}, err
	}
	var g Goals
	return g, json.Unmarshal(raw, &g)
}

// sums runs one aggregation over the patient's activity: the step sums
// since each of the given starts (searches see refreshed writes only).
func (s *searchStore) sums(ctx context.Context, id string, upTo int64, starts ...int64) ([]int64, error) {
	lo := starts[0]
	aggs := map[string]any{}
	for i, st := range starts {
		lo = min(lo, st)
		aggs[strconv.Itoa(i)] = map[string]any{"filter": map[string]any{"range": map[string]any{"start": map[string]any{"gte": st}}},
			"aggs": map[string]any{"s": map[string]any{"sum": map[string]any{"field": "steps"}}}}
	}
	body, _ := json.Marshal(map[string]any{"size": 0, "track_total_hits": false,
		"query": map[string]any{"bool": map[string]any{"filter": []any{
			map[string]any{"term": map[string]any{"patient": id}},
			map[string]any{"range": map[string]any{"start": map[string]any{"gte": lo, "lte": upTo}}},
		}}}, "aggs": aggs})
	res, err := s.c.Search(ctx, s.activityIndex(id), body, s.c.RoutingFor(id))
	if err != nil {
		return nil, err
	}
	var parsed map[string]struct {
		S struct {
			Value float64 `json:"value"`
		} `json:"s"`
	}
	if err := json.Unmarshal(res.Aggregations, &parsed); err != nil {
		return nil, fmt.Errorf("decode aggregation: %w", err)
	}
	out := make([]int64, len(starts))
	for i := range starts {
		out[i] = int64(parsed[strconv.Itoa(i)].S.Value)
	}
	return out, nil
}

func (s *searchStore) postActivity(ctx context.Context, patient int64, a Activity) error {
	id := patientKey(patient)
	doc, _ := json.Marshal(map[string]any{"patient": id, "start": a.Start, "end": a.End, "type": a.Type, "steps": a.Steps})
	// The id is the start time and the patient (the study used the user id
	// as the document type, which Elasticsearch 7 no longer has): start
	// alone would let patients overwrite each other in a shared index.
	if err := s.c.IndexDoc(ctx, s.activityIndex(id), strconv.FormatInt(a.Start, 10)+"-"+id, s.c.RoutingFor(id), doc); err != nil {
		return err
	}
	d, w, m := dayStart(a.Start), weekStart(a.Start), monthStart(a.Start)
	sums, err := s.sums(ctx, id, a.Start, d, w, m)
	if err != nil {
		return err
	}
	ach, _ := json.Marshal(map[string]int64{"day_start": d, "daily": sums[0], "weekly": sums[1], "monthly": sums[2], "updated_for": a.Start})
	return s.c.IndexDoc(ctx, s.c.IndexName(idxAchievements, ""), id, s.c.RoutingFor(id), ach)
}

func (s *searchStore) achievements(ctx context.Context, patient int64) (Achievements, error) {
	id := patientKey(patient)
	g, err := s.goals(ctx, id)
	if err != nil {
		return Achievements{}, err
	}
	raw, err := s.c.GetDoc(ctx, s.c.IndexName(idxAchievements, ""), id, s.c.RoutingFor(id), "")
	if errors.Is(err, engine.ErrNotFound) {
		return Achievements{Goals: g}, nil // no post yet
	}
	if err != nil {
		return Achievements{}, err
	}
	var doc struct {
		DayStart   int64 `json:"day_start"`
		Daily      int64 `json:"daily"`
		Weekly     int64 `json:"weekly"`
		Monthly    int64 `json:"monthly"`
		UpdatedFor int64 `json:"updated_for"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return Achievements{}, fmt.Errorf("decode achievements: %w", err)
	}
	return Achievements{DayStart: doc.DayStart, Daily: doc.Daily, Weekly: doc.Weekly, Monthly: doc.Monthly, UpdatedFor: doc.UpdatedFor, Goals: g}, nil
}

// totals is a sum aggregation over all of the patient's activity.
func (s *searchStore) totals(ctx context.Context, patient int64) (int64, error) {
	id := patientKey(patient)
	sums, err := s.sums(ctx, id, 1<<62, 0)
	if err != nil {
		return 0, err
	}
	return sums[0], nil
}

func planID(patient int64, week int) string { return fmt.Sprintf("%s-%03d", patientKey(patient), week) }

type planDoc struct {
	Patient   string `json:"patient"`
	Week      int    `json:"week"`
	Level     int    `json:"level"`
	Exercises string `json:"exercises"`
	Education string `json:"education"`
	XDone     string `json:"xdone"`
	EDone     string `json:"edone"`
	Answers   string `json:"answers"`
}

// savePlan reads the descriptions of the plan's items from the static
// catalog (the force-mergeable index), then stores the plan.
func (s *searchStore) savePlan(ctx context.Context, patient int64, p Plan) error {
	items := append(append([]string{}, p.Exercises...), p.Education...)
	q, _ := json.Marshal(map[string]any{"size": len(items), "query": map[string]any{"terms": map[string]any{"item": items}}})
	if _, err := s.c.Search(ctx, s.c.IndexName(idxDescription, ""), q, ""); err != nil {
		return err
	}
	id := patientKey(patient)
	doc, _ := json.Marshal(planDoc{Patient: id, Week: p.Week, Level: p.Level, Exercises: encodeList(p.Exercises), Education: encodeList(p.Education),
		XDone: encodeBools(p.ExerciseDone), EDone: encodeBools(p.EducationDone), Answers: encodeAnswers(p.Answers)})
	return s.c.IndexDoc(ctx, s.c.IndexName(idxPlan, ""), planID(patient, p.Week), s.c.RoutingFor(id), doc)
}

func (s *searchStore) plan(ctx context.Context, patient int64, week int) (Plan, error) {
	raw, err := s.c.GetDoc(ctx, s.c.IndexName(idxPlan, ""), planID(patient, week), s.c.RoutingFor(patientKey(patient)), "")
	if err != nil {
		return Plan{}, err
	}
	var d planDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		return Plan{}, fmt.Errorf("decode plan: %w", err)
	}
	return Plan{Week: d.Week, Level: d.Level, Exercises: decodeList(d.Exercises), Education: decodeList(d.Education),
		ExerciseDone: decodeBools(d.XDone), EducationDone: decodeBools(d.EDone), Answers: decodeAnswers(d.Answers)}, nil
}

// markDone reads the plan (real time) and writes the new marks back.
func (s *searchStore) markDone(ctx context.Context, patient int64, week int, kind byte, item int) error {
	p, err := s.plan(ctx, patient, week)
	if err != nil {
		return err
	}
	marks, field := p.ExerciseDone, "xdone"
	if kind == 'e' {
		marks, field = p.EducationDone, "edone"
	}
	if item < 0 || item >= len(marks) {
		return fmt.Errorf("%w: plan item %d of %d", engine.ErrNotFound, item, len(marks))
	}
	marks[item] = true
	partial, _ := json.Marshal(map[string]string{field: encodeBools(marks)})
	return s.c.UpdateDoc(ctx, s.c.IndexName(idxPlan, ""), planID(patient, week), s.c.RoutingFor(patientKey(patient)), partial)
}

// refreshAll refreshes every index of the cluster, as the study's client
// did after each write ("_all", not only mhealth's).
func (s *searchStore) refreshAll(ctx context.Context) error { return s.c.Refresh(ctx, "_all") }

// settle refreshes every mhealth index so that searches see every write.
func (s *searchStore) settle(ctx context.Context) error { return s.c.Refresh(ctx, s.all) }

func (s *searchStore) close() error { return nil }
