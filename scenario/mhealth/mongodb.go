package mhealth

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/mongodb"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/kit"
)

// On MongoDB the backend is the study's second one: activities in one
// shared collection, or one collection per patient (mongodb.layout), each
// posted as an upsert keyed on its natural id, start + "-" + patient
// (mongodb.natural_ids; false inserts documents with generated ids, which
// a retried post duplicates). Achievements are recomputed by aggregation
// over the patient's activities on every post and stored; the total is an
// aggregation over them when read. A post is three writes in order, with
// no multi-document transaction (FerretDB v1 has none).

func init() { openers[mongodb.Name] = openMongo }

// Collections of the mhealth scenario on MongoDB.
const (
	mongoPatients       = "mh_patient"
	mongoActivity       = "mh_activity"     // the shared layout's activities
	mongoActivityUser   = "mh_activity_"    // + patient id: the per_user layout's
	mongoAchievements   = "mh_achievements" // _id: patient
	mongoPlans          = "mh_plan"         // _id: patient-week
	mongoPrefix         = "mh_"             // every collection's
	codeNamespaceExists = 48
)

type mongoStore struct {
	c       *mongodb.Conn
	perUser bool
	natural bool
}

func openMongo(ctx context.Context, env scenario.Env, _ *config) (store, error) {
	c, err := kit.AsConn[*mongodb.Conn](env)
	if err != nil {
		return nil, err
	}
	o := c.Options()
	s := &mongoStore{c: c, perUser: o.Layout == mongodb.LayoutPerUser, natural: o.NaturalIDs}
	// every collection of the scenario (mh_*) is checked before any is
	// written, then recorded as scalelab's: the per-user activities as a
	// family, created as patients post
	if err := c.Claim(ctx, mongodb.Prefixed(mongoPrefix)); err != nil {
		return nil, err
	}
	if err := c.Own(ctx, mongoPatients, mongoActivity, mongoAchievements, mongoPlans, mongoActivityUser+"*"); err != nil {
		return nil, err
	}
	return s, s.index(ctx)
}

// index makes the shared layout's index of activities by patient and
// start.
func (s *mongoStore) index(ctx context.Context) error {
	if s.perUser {
		return nil
	}
	if _, err := s.c.Primary().Collection(mongoActivity).Indexes().CreateOne(ctx,
		mongo.IndexModel{Keys: bson.D{{Key: "patient", Value: 1}, {Key: "start", Value: 1}}}); err != nil {
		return fmt.Errorf("mhealth mongodb: activity index: %w", err)
	}
	return nil
}

func (s *mongoStore) stores() bool { return true }

// reset drops every collection of the scenario.
func (s *mongoStore) reset(ctx context.Context) error {
	ctx, cancel := mongodb.Unmeasured(ctx)
	defer cancel()
	db := s.c.Primary()
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return fmt.Errorf("mhealth mongodb: list collections: %w", err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, mongoPrefix) {
			if err := db.Collection(n).Drop(ctx); err != nil {
				return fmt.Errorf("mhealth mongodb: drop %s: %w", n, err)
			}
		}
	}
	return s.index(ctx)
}

// activities returns the collection of a patient's activities and the
// filter that selects them in it.
func (s *mongoStore) activities(db *mongo.Database, patient int64) (*mongo.Collection, bson.D) {
	if s.perUser {
		return db.Collection(mongoActivityUser + strconv.FormatInt(patient, 10)), bson.D{}
	}
	return db.Collection(mongoActivity), bson.D{{Key: "patient", Value: patient}}
}

func naturalID(patient, start int64) string {
	return strconv.FormatInt(start, 10) + "-" + strconv.FormatInt(patient, 10)
}

func (s *mongoStore) createPatient(ctx context.Context, p Patient) error {
	db := s.c.Database()
	if _, err := db.Collection(mongoPatients).InsertOne(ctx, bson.D{{Key: "_id", Value: p.ID}, {Key: "created", Value: p.Created},
		{Key: "goal_daily", Value: p.Goals.Daily}, {Key: "goal_weekly", Value: p.Goals.Weekly}, {Key: "goal_monthly", Value: p.Goals.Monthly}}); err != nil {
		return err
	}
	if s.perUser {
		coll, _ := s.activities(db, p.ID)
		err := db.CreateCollection(ctx, coll.Name())
		var ce mongo.CommandError
		if err != nil && !(errors.As(err, &ce) && ce.HasErrorCode(codeNamespaceExists)) {
			return err
		}
		if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "start", Value: 1}}}); err != nil {
			return err
		}
	}
	return nil
}

func (s *mongoStore) postActivity(ctx context.Context, patient int64, a Activity) error {
	db := s.c.Database()
	coll, filter := s.activities(db, patient)
	doc := bson.D{{Key: "patient", Value: patient}, {Key: "start", Value: a.Start}, {Key: "end", Value: a.End}, {Key: "type", Value: a.Type}, {Key: "steps", Value: a.Steps}}
	if s.natural {
		if _, err := coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: naturalID(patient, a.Start)}}, doc, options.Replace().SetUpsert(true)); err != nil {
			return err
		}
	} else if _, err := coll.InsertOne(ctx, doc); err != nil {
		return err
	}
	d, w, m := dayStart(a.Start), weekStart(a.Start), monthStart(a.Start)
	// FerretDB v1 has no $cond: one aggregation per period.
	var sums [3]int64
	for i, from := range []int64{d, w, m} {
		var err error
		if sums[i], err = sumSteps(ctx, coll, append(filter, bson.E{Key: "start", Value: bson.D{{Key: "$gte", Value: from}, {Key: "$lte", Value: a.Start}}})); err != nil {
			return err
		}
	}
	if sums[0] < a.Steps {
		return fmt.Errorf("%w: the activity of patient %d at %d is not in its day's sum", engine.ErrIntegrity, patient, a.Start)
	}
	_, err := db.Collection(mongoAchievements).ReplaceOne(ctx, bson.D{{Key: "_id", Value: patient}},
		bson.D{{Key: "day_start", Value: d}, {Key: "daily", Value: sums[0]}, {Key: "weekly", Value: sums[1]},
			{Key: "monthly", Value: sums[2]}, {Key: "updated_for", Value: a.Start}}, options.Replace().SetUpsert(true))
	return err
}

// sumSteps sums the steps of the activities of coll that filter selects,
// by aggregation.
func sumSteps(ctx context.Context, coll *mongo.Collection, filter bson.D) (int64, error) {
	cur, err := coll.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: filter}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "steps", Value: bson.D{{Key: "$sum", Value: "$steps"}}}}}},
	})
	if err != nil {
		return 0, err
	}
	var out []struct{ Steps int64 }
	if err := cur.All(ctx, &out); err != nil {
		return 0, err
	}
	if len(out) == 0 {
		return 0, nil
	}
	return out[0].Steps, nil
}

func (s *mongoStore) achievements(ctx context.Context, patient int64) (Achievements, error) {
	db := s.c.Database()
	var p struct {
		Daily   int64 `bson:"goal_daily"`
		Weekly  int64 `bson:"goal_weekly"`
		Monthly int64 `bson:"goal_monthly"`
	}
	if err := db.Collection(mongoPatients).FindOne(ctx, bson.D{{Key: "_id", Value: patient}}).Decode(&p); err != nil {
		return Achievements{}, mongoNotFound(err)
	}
	var a struct {
		DayStart   int64 `bson:"day_start"`
		Daily      int64 `bson:"daily"`
		Weekly     int64 `bson:"weekly"`
		Monthly    int64 `bson:"monthly"`
		UpdatedFor int64 `bson:"updated_for"`
	}
	if err := db.Collection(mongoAchievements).FindOne(ctx, bson.D{{Key: "_id", Value: patient}}).Decode(&a); err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		return Achievements{}, err
	}
	return Achievements{DayStart: a.DayStart, Daily: a.Daily, Weekly: a.Weekly, Monthly: a.Monthly, UpdatedFor: a.UpdatedFor,
		Goals: Goals{Daily: p.Daily, Weekly: p.Weekly, Monthly: p.Monthly}}, nil
}

// totals sums the patient's activities (an aggregation; a patient with
// none has 0, an unknown patient is not found).
func (s *mongoStore) totals(ctx context.Context, patient int64) (int64, error) {
	db := s.c.Database()
	if err := db.Collection(mongoPatients).FindOne(ctx, bson.D{{Key: "_id", Value: patient}}).Err(); err != nil {
		return 0, mongoNotFound(err)
	}
	coll, filter := s.activities(db, patient)
	return sumSteps(ctx, coll, filter)
}

func mongoPlanID(patient int64, week int) string {
	return strconv.FormatInt(patient, 10) + "-" + strconv.Itoa(week)
}

// mongoPlan is a plan document.
type mongoPlan struct {
	Level     int      `bson:"level"`
	Exercises []string `bson:"exercises"`
	Education []string `bson:"education"`
	XDone     []bool   `bson:"xdone"`
	EDone     []bool   `bson:"edone"`
	Answers   string   `bson:"answers"`
}

func (s *mongoStore) savePlan(ctx context.Context, patient int64, p Plan) error {
	doc := mongoPlan{Level: p.Level, Exercises: nonNil(p.Exercises), Education: nonNil(p.Education),
		XDone: nonNil(p.ExerciseDone), EDone: nonNil(p.EducationDone), Answers: encodeAnswers(p.Answers)}
	_, err := s.c.Database().Collection(mongoPlans).ReplaceOne(ctx, bson.D{{Key: "_id", Value: mongoPlanID(patient, p.Week)}}, doc, options.Replace().SetUpsert(true))
	return err
}

func (s *mongoStore) plan(ctx context.Context, patient int64, week int) (Plan, error) {
	return s.planFrom(ctx, s.c.Database(), patient, week)
}

// readPlan reads a plan from the primary, for the audit.
func (s *mongoStore) readPlan(ctx context.Context, patient int64, week int) (Plan, error) {
	ctx, cancel := mongodb.Unmeasured(ctx)
	defer cancel()
	return s.planFrom(ctx, s.c.Primary(), patient, week)
}

func (s *mongoStore) planFrom(ctx context.Context, db *mongo.Database, patient int64, week int) (Plan, error) {
	var d mongoPlan
	if err := db.Collection(mongoPlans).FindOne(ctx, bson.D{{Key: "_id", Value: mongoPlanID(patient, week)}}).Decode(&d); err != nil {
		return Plan{}, mongoNotFound(err)
	}
	return Plan{Week: week, Level: d.Level, Exercises: d.Exercises, Education: d.Education,
		ExerciseDone: d.XDone, EducationDone: d.EDone, Answers: decodeAnswers(d.Answers)}, nil
}

// markDone sets one done mark with a single update of the array element.
func (s *mongoStore) markDone(ctx context.Context, patient int64, week int, kind byte, item int) error {
	field := "xdone"
	if kind == 'e' {
		field = "edone"
	}
	elem := field + "." + strconv.Itoa(item)
	r, err := s.c.Database().Collection(mongoPlans).UpdateOne(ctx,
		bson.D{{Key: "_id", Value: mongoPlanID(patient, week)}, {Key: elem, Value: bson.D{{Key: "$exists", Value: true}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: elem, Value: true}}}})
	if err != nil {
		return err
	}
	if r.MatchedCount == 0 && r.Acknowledged {
		return fmt.Errorf("%w: plan item %d of week %d of patient %d", engine.ErrNotFound, item, week, patient)
	}
	return nil
}

// readActivities reports which activities the primary holds.
func (s *mongoStore) readActivities(ctx context.Context, ids []int64, present []bool) error {
	ctx, cancel := mongodb.Unmeasured(ctx)
	defer cancel()
	db := s.c.Primary()
	byPatient := map[int64][]int{}
	for i, id := range ids {
		p, _ := splitActivityID(id)
		byPatient[p] = append(byPatient[p], i)
	}
	for p, idx := range byPatient {
		coll, filter := s.activities(db, p)
		starts := make(bson.A, len(idx))
		for j, i := range idx {
			_, starts[j] = splitActivityID(ids[i])
		}
		cur, err := coll.Find(ctx, append(filter, bson.E{Key: "start", Value: bson.D{{Key: "$in", Value: starts}}}),
			options.Find().SetProjection(bson.D{{Key: "start", Value: 1}}))
		if err != nil {
			return fmt.Errorf("mhealth mongodb: read back patient %d: %w", p, err)
		}
		var got []struct {
			Start int64 `bson:"start"`
		}
		if err := cur.All(ctx, &got); err != nil {
			return fmt.Errorf("mhealth mongodb: read back patient %d: %w", p, err)
		}
		have := make(map[int64]bool, len(got))
		for _, g := range got {
			have[g.Start] = true
		}
		for _, i := range idx {
			_, start := splitActivityID(ids[i])
			present[i] = have[start]
		}
	}
	return nil
}

// mongoNotFound makes "no document" the scenario's ErrNotFound (the
// engine classifies its other errors).
func mongoNotFound(err error) error {
	if errors.Is(err, mongo.ErrNoDocuments) {
		return engine.ErrNotFound
	}
	return err
}

func (s *mongoStore) settle(context.Context) error { return nil }
func (s *mongoStore) close() error                 { return nil }
