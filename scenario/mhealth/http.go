package mhealth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/httpload"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario"
)

// The backend over HTTP, with the study's REST paths: `scalelab serve
// mhealth` (or a balancer in front of several) serves them on the store,
// and a run with mhealth.app=URL sends every patient request there instead
// of to the store. The load phase and the post-run check still use the
// run's own connection to the store.

// Paths of the backend.
const (
	PathPatient      = "/patient"
	PathActivity     = "/patient/activity"
	PathAchievements = "/patient/achievements"
	PathTotals       = "/patient/totals"
	PathPlanNext     = "/patient/plan/next"
	PathTailoring    = "/patient/plan/tailoring"
	PathExercise     = "/patient/plan/updateuser/exercise"
	PathEducation    = "/patient/plan/updateuser/education"
)

var _ scenario.Server = (*Scenario)(nil)

// Handler opens the store on a connected engine (no load) and returns the
// backend's routes.
func (s *Scenario) Handler(ctx context.Context, env scenario.Env) (http.Handler, error) {
	cfg := configFrom(env.Settings)
	st, err := openers.Open(ctx, Name, env, cfg)
	if err != nil {
		return nil, err
	}
	b := &backend{st: st, views: map[int64]store{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+PathPatient, b.createPatient)
	mux.HandleFunc("POST "+PathActivity, b.postActivity)
	mux.HandleFunc("GET "+PathAchievements, b.achievements)
	mux.HandleFunc("GET "+PathTotals, b.totals)
	mux.HandleFunc("GET "+PathPlanNext, b.plan)
	mux.HandleFunc("POST "+PathPlanNext, b.savePlan)
	mux.HandleFunc("GET "+PathTailoring, b.questions)
	mux.HandleFunc("POST "+PathExercise, b.markDone('x'))
	mux.HandleFunc("POST "+PathEducation, b.markDone('e'))
	return mux, nil
}

// backend serves the paths; each patient reads through a view of their
// own (a read-your-writes window on replicas).
type backend struct {
	st    store
	mu    sync.Mutex
	views map[int64]store
}

func (b *backend) view(patient int64) store {
	ss, ok := b.st.(sessionStore)
	if !ok {
		return b.st
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.views[patient]
	if !ok {
		if len(b.views) > 100000 {
			clear(b.views)
		}
		v = ss.forSession()
		b.views[patient] = v
	}
	return v
}

// patientOf reads ?patient=ID (and answers 400 without it).
func patientOf(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.URL.Query().Get("patient"), 10, 64)
	if err != nil || id < 0 {
		http.Error(w, "?patient=ID is needed", http.StatusBadRequest)
		return 0, false
	}
	return id, true
}

// answer writes v as JSON, or the store's error: 404 not found, 503 a
// timeout, 500 otherwise.
func answer(w http.ResponseWriter, v any, err error) {
	switch {
	case errors.Is(err, engine.ErrNotFound):
		http.Error(w, err.Error(), http.StatusNotFound)
	case errors.Is(err, context.DeadlineExceeded) || metrics.ClassOf(err) == metrics.Timeout:
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	case v == nil:
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(v); err != nil {
		http.Error(w, "bad JSON body: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func (b *backend) createPatient(w http.ResponseWriter, r *http.Request) {
	var p Patient
	if decode(w, r, &p) {
		answer(w, nil, b.view(p.ID).createPatient(r.Context(), p))
	}
}

func (b *backend) postActivity(w http.ResponseWriter, r *http.Request) {
	id, ok := patientOf(w, r)
	var a Activity
	if ok && decode(w, r, &a) {
		answer(w, nil, b.view(id).postActivity(r.Context(), id, a))
	}
}

func (b *backend) achievements(w http.ResponseWriter, r *http.Request) {
	if id, ok := patientOf(w, r); ok {
		a, err := b.view(id).achievements(r.Context(), id)
		answer(w, a, err)
	}
}

func (b *backend) totals(w http.ResponseWriter, r *http.Request) {
	if id, ok := patientOf(w, r); ok {
		n, err := b.view(id).totals(r.Context(), id)
		answer(w, map[string]int64{"steps": n}, err)
	}
}

func (b *backend) plan(w http.ResponseWriter, r *http.Request) {
	id, ok := patientOf(w, r)
	week, err := strconv.Atoi(r.URL.Query().Get("week"))
	if ok && err != nil {
		http.Error(w, "?week=N is needed", http.StatusBadRequest)
		return
	}
	if ok {
		p, err := b.view(id).plan(r.Context(), id, week)
		answer(w, p, err)
	}
}

func (b *backend) savePlan(w http.ResponseWriter, r *http.Request) {
	id, ok := patientOf(w, r)
	var p Plan
	if ok && decode(w, r, &p) {
		answer(w, nil, b.view(id).savePlan(r.Context(), id, p))
	}
}

func (b *backend) questions(w http.ResponseWriter, r *http.Request) {
	answer(w, TailoringQuestions, nil)
}

func (b *backend) markDone(kind byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, ok := patientOf(w, r)
		q := r.URL.Query()
		week, err1 := strconv.Atoi(q.Get("week"))
		item, err2 := strconv.Atoi(q.Get("item"))
		if ok && (err1 != nil || err2 != nil) {
			http.Error(w, "?week=N&item=I are needed", http.StatusBadRequest)
			return
		}
		if ok {
			answer(w, nil, b.view(id).markDone(r.Context(), id, week, kind, item))
		}
	}
}

// httpStore is the store a session sees with mhealth.app: every patient
// request goes to the backend over HTTP; reset, settle and the read-back
// use the run's own connection (direct).
type httpStore struct {
	direct  store
	base    string
	counter *httpload.Counter
	timeout time.Duration
	user    *httpload.User
	// shared, when set, carries every session's requests over at most
	// mhealth.app_conns connections; nil: each session has its own
	shared *http.Transport
}

func newHTTPStore(direct store, base string, timeout time.Duration, conns int) *httpStore {
	h := &httpStore{direct: direct, base: base, counter: httpload.NewCounter(), timeout: timeout}
	if conns > 0 {
		h.shared = httpload.NewTransport(conns, conns)
	}
	h.user = h.newUser()
	return h
}

func (h *httpStore) newUser() *httpload.User {
	if h.shared != nil {
		return httpload.NewUserOn(h.base, h.counter, h.timeout, h.shared)
	}
	return httpload.NewUser(h.base, h.counter, h.timeout)
}

// forSession gives each patient session its own connections (a phone's),
// or its own user on the shared ones.
func (h *httpStore) forSession() store {
	c := *h
	c.user = h.newUser()
	return &c
}

func (h *httpStore) stores() bool                     { return h.direct.stores() }
func (h *httpStore) reset(ctx context.Context) error  { return h.direct.reset(ctx) }
func (h *httpStore) settle(ctx context.Context) error { return h.direct.settle(ctx) }
func (h *httpStore) close() error                     { h.user.Close(); return h.direct.close() }
func patientQuery(id int64, extra ...string) string {
	q := "?patient=" + strconv.FormatInt(id, 10)
	for i := 0; i+1 < len(extra); i += 2 {
		q += "&" + extra[i] + "=" + extra[i+1]
	}
	return q
}

// call sends a request and decodes a JSON answer into out (nil: none);
// a 404 is engine.ErrNotFound.
func (h *httpStore) call(ctx context.Context, op, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	want := http.StatusOK
	if out == nil {
		want = http.StatusNoContent
	}
	p, err := h.user.Do(ctx, op, method, path, bytes.NewReader(body), "application/json", want)
	var se *httpload.StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound {
		return fmt.Errorf("%s %s: %w", method, path, engine.ErrNotFound)
	}
	if err != nil {
		return err
	}
	if out != nil {
		if err := json.Unmarshal([]byte(p.Body), out); err != nil {
			return metrics.WithClass(metrics.Other, fmt.Errorf("%s %s: bad answer: %w", method, path, err))
		}
	}
	return nil
}

func (h *httpStore) createPatient(ctx context.Context, p Patient) error {
	return h.call(ctx, operationNames[OpPatientCreate], http.MethodPost, PathPatient, p, nil)
}

func (h *httpStore) postActivity(ctx context.Context, patient int64, a Activity) error {
	return h.call(ctx, operationNames[OpActivityPost], http.MethodPost, PathActivity+patientQuery(patient), a, nil)
}

func (h *httpStore) achievements(ctx context.Context, patient int64) (Achievements, error) {
	var a Achievements
	err := h.call(ctx, operationNames[OpAchievementsGet], http.MethodGet, PathAchievements+patientQuery(patient), nil, &a)
	return a, err
}

func (h *httpStore) totals(ctx context.Context, patient int64) (int64, error) {
	var t struct{ Steps int64 }
	err := h.call(ctx, operationNames[OpTotalsGet], http.MethodGet, PathTotals+patientQuery(patient), nil, &t)
	return t.Steps, err
}

func (h *httpStore) savePlan(ctx context.Context, patient int64, p Plan) error {
	return h.call(ctx, operationNames[OpPlanNext], http.MethodPost, PathPlanNext+patientQuery(patient), p, nil)
}

func (h *httpStore) plan(ctx context.Context, patient int64, week int) (Plan, error) {
	var p Plan
	err := h.call(ctx, "plan.get", http.MethodGet, PathPlanNext+patientQuery(patient, "week", strconv.Itoa(week)), nil, &p)
	return p, err
}

func (h *httpStore) markDone(ctx context.Context, patient int64, week int, kind byte, item int) error {
	path, op := PathExercise, operationNames[OpExerciseUpdate]
	if kind == 'e' {
		path, op = PathEducation, operationNames[OpEducationUpdate]
	}
	return h.call(ctx, op, http.MethodPost, path+patientQuery(patient, "week", strconv.Itoa(week), "item", strconv.Itoa(item)), nil, nil)
}
