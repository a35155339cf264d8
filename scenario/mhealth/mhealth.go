// Package mhealth is the "mhealth" scenario: the backend of a phone app for
// lower-back-pain self-management (the selfBACK study). Patients post an
// hour of step counts at a time; every post recomputes the patient's
// achievements (daily, weekly and monthly step sums against goals) and
// total steps; each week starts with a plan built from the previous week's
// answers, the patient marks exercises and education items done, and the
// week ends with tailoring questions. A session is one patient living
// through mhealth.weeks weeks on a simulated clock: weeks of data in
// seconds of real time.
//
// The storage for each engine lives in its own file behind the store
// interface (store.go), and each documents how it keeps achievements and
// totals: by aggregation, counters or read-modify-write.
package mhealth

import (
	"github.com/scalelab/scalelab/scenario/kit"

	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scalelab/scalelab/app"
	"github.com/scalelab/scalelab/cache"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/httpload"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
)

// Name is the scenario's registry name.
const Name = "mhealth"

// Operation indexes, in the order Workload.Operations returns their names
// (the study's endpoints).
const (
	OpActivityPost = iota
	OpAchievementsGet
	OpTotalsGet
	OpPlanNext
	OpPlanTailoring
	OpExerciseUpdate
	OpEducationUpdate
	OpPatientCreate
	// OpActivityClient is the composite the patient's client observed (the
	// study's activity time): the post, the client's wait after it and the
	// reads that follow, from the post's intended start.
	OpActivityClient
	numOps
)

var operationNames = []string{"activity.post", "achievements.get", "totals.get", "plan.next", "plan.tailoring", "exercise.update", "education.update", "patient.create", "activity.client"}

// activityClient describes OpActivityClient for run.json and the report.
const activityClient = "the patient's client: activity.post, the mhealth.wait_after_write wait after it and the totals.get and achievements.get that follow, timed from the post's intended start"

// Setting keys.
const (
	KeyWeeks          = "mhealth.weeks"
	KeyHoursPerWeek   = "mhealth.hours_per_week"
	KeyPatients       = "mhealth.patients"
	KeyReadProb       = "mhealth.read_probability"
	KeyWaitAfterWrite = "mhealth.wait_after_write"
	KeyRequireFresh   = "mhealth.require_fresh"
	KeyVerify         = "mhealth.verify"
	KeyLoad           = "mhealth.load"
	KeyApp            = "mhealth.app"
	KeyAppConns       = "mhealth.app_conns"
	KeyRefreshAfter   = "mhealth.refresh_after_write"
)

// Values of mhealth.refresh_after_write.
const (
	RefreshOff = "off"
	RefreshAll = "all"
)

func init() { scenario.Register(&Scenario{}) }

// Scenario is the mhealth scenario.
type Scenario struct{}

var _ scenario.Scenario = (*Scenario)(nil)

// Name returns "mhealth".
func (*Scenario) Name() string { return Name }

// Operations names the operations its workloads run (scenario.Operator).
func (*Scenario) Operations() []string { return append([]string(nil), operationNames...) }

// Description is one line for `scalelab list`.
func (*Scenario) Description() string {
	return "patient self-management backend (selfBACK): hourly step posts, achievements, totals, weekly plans, on a simulated clock"
}

// Settings declares the scenario's settings.
func (*Scenario) Settings() []setting.Spec {
	return append([]setting.Spec{
		{Key: KeyWeeks, Kind: setting.Int, Default: "3", Min: 1, Max: 52, Description: "simulated weeks each patient (session) lives through"},
		{Key: KeyHoursPerWeek, Kind: setting.Int, Default: "144", Min: 1, Max: 168, Description: "hourly activity posts per week (the study: 24 x 6 = 144)"},
		{Key: KeyPatients, Kind: setting.Int, Default: "100", Min: 0, Max: 10_000_000, Description: "patients created in the load phase; sessions beyond them create their own patient first (patient.create)"},
		{Key: KeyReadProb, Kind: setting.Float, Default: "1", Min: 0, Max: 1, Description: "probability that a post is followed by totals.get and achievements.get (the study fetched both)"},
		{Key: KeyWaitAfterWrite, Kind: setting.Duration, Default: "0s", Min: 0, Max: 60, Description: "real pause after each write before the next request (the study's client waited 1000ms for the search index to refresh)"},
		{Key: KeyRefreshAfter, Kind: setting.Enum, Default: RefreshOff, Allowed: []string{RefreshOff, RefreshAll},
			Description: "all: after each write the client refreshes every index of the search store (POST /_all/_refresh, inside the write's time), as the study's manual-refresh client did; off: none (per-request refresh is the engine's <engine>.refresh=true)"},
		{Key: KeyRequireFresh, Kind: setting.Bool, Default: "false", Description: "a read that misses the session's own earlier write is an integrity error instead of a counted stale_read"},
		{Key: KeyVerify, Kind: setting.Bool, Default: "true", Description: "check totals, achievements and plans read back against an independent computation from the generated activity"},
		{Key: KeyLoad, Kind: setting.Bool, Default: "true", Description: "recreate the data and create mhealth.patients patients before the run"},
		{Key: KeyApp, Kind: setting.String, Default: "", Check: kit.AppURL, Description: "URL of the backend over HTTP (scalelab serve mhealth, or a balancer in front of several): patients' requests go there; the load and the check use the store directly"},
		{Key: KeyAppConns, Kind: setting.Int, Default: "0", Min: 0, Max: 65536, Description: "with mhealth.app: connections all sessions share, as a backend client's pool (a request waits for a free one, inside its time); 0: each session keeps its own, as each phone does (a connection per live session: more sessions than open files allow fail)"},
	}, cache.DirectSpecs()...)
}

// openers maps engine names to their storage; each storage file adds itself.
var openers = kit.Storage[*config, store]{}

// Engines lists the engines with a storage file.
func (*Scenario) Engines() []string { return openers.Engines() }

// config is the resolved settings.
type config struct {
	weeks, hours int
	patients     int64
	readProb     float64
	waitAfter    int64 // ns
	refreshAll   bool  // refresh every index after each write
	requireFresh bool
	verify, load bool
	app          string
	appConns     int
	cacheWrite   string
	cacheTTL     time.Duration
}

func configFrom(set *setting.Set) *config {
	return &config{
		weeks:        int(set.Get(KeyWeeks).Int()),
		hours:        int(set.Get(KeyHoursPerWeek).Int()),
		patients:     set.Get(KeyPatients).Int(),
		readProb:     set.Get(KeyReadProb).Float(),
		waitAfter:    int64(set.Get(KeyWaitAfterWrite).Duration()),
		refreshAll:   set.Get(KeyRefreshAfter).String() == RefreshAll,
		requireFresh: set.Get(KeyRequireFresh).Bool(),
		verify:       set.Get(KeyVerify).Bool(),
		load:         set.Get(KeyLoad).Bool(),
		app:          set.Get(KeyApp).String(),
		appConns:     int(set.Get(KeyAppConns).Int()),
		cacheWrite:   set.Get(cache.KeyWrite).String(),
		cacheTTL:     set.Get(cache.KeyTTL).Duration(),
	}
}

// Open resolves the settings and opens the engine's storage, recreating the
// data when mhealth.load is true.
func (s *Scenario) Open(ctx context.Context, env scenario.Env) (scenario.Workload, error) {
	if err := kit.RequireSettings(Name, env.Settings, s.Settings()); err != nil {
		return nil, err
	}
	cfg := configFrom(env.Settings)
	st, err := openers.Open(ctx, Name, env, cfg)
	if err != nil {
		return nil, err
	}
	if !st.stores() {
		cfg.verify, cfg.requireFresh = false, false
	}
	rf, _ := st.(refresher)
	if cfg.refreshAll && rf == nil {
		st.close()
		return nil, fmt.Errorf("%w: %s=%s: the %s engine has no index refresh; it applies to opensearch and elasticsearch", setting.ErrBadValue, KeyRefreshAfter, RefreshAll, env.Engine)
	}
	if cfg.load {
		if err := st.reset(ctx); err != nil {
			st.close()
			return nil, fmt.Errorf("mhealth on %s: reset: %w", env.Engine, err)
		}
	}
	w := &Workload{cfg: cfg, st: st, base: st, seed: env.Seed, patients: map[int64]*patientState{}, cacheStats: cache.NewStats()}
	if cfg.refreshAll {
		w.refresh = rf
	}
	if cfg.app == "" && !env.ReadBackOnly {
		if w.st, w.cacheMode, w.cacheEngine, err = openCache(ctx, env, st, w.cacheStats); err != nil {
			st.close()
			return nil, err
		}
		w.embedded = kit.InProcessBound(env, w.cacheMode != cache.Off)
	}
	if cfg.app != "" && !env.ReadBackOnly {
		base, err := httpload.Base(cfg.app)
		if err != nil {
			st.close()
			return nil, fmt.Errorf("%w: %s: %v", setting.ErrBadValue, KeyApp, err)
		}
		// checked before the load, as an engine is when it connects
		if err := httpload.Reachable(ctx, base, app.HealthPath, 10*time.Second); err != nil {
			st.close()
			return nil, fmt.Errorf("%s %s (--app): %w; start the backend first (scalelab serve mhealth, or scalelab cluster up app) or fix the URL", KeyApp, base, err)
		}
		w.http = newHTTPStore(st, base, 30*time.Second, cfg.appConns)
		w.st = w.http
	}
	return w, nil
}

// Workload is an opened mhealth workload.
type Workload struct {
	cfg *config
	st  store // what the sessions use: the store, behind a cache or the app
	// base is the store itself, past any cache and the app: the load
	// creates patients in it, the audit and the check read it back
	base store
	seed uint64
	http *httpStore // mhealth.app: the backend over HTTP
	// embedded is the bound of a store in this process, without a cache
	// in front: each operation is one transaction on one connection
	embedded kit.StoreBound
	// refresh is the store's refresh of every index after each write
	// (mhealth.refresh_after_write=all); nil: none
	refresh refresher

	mu       sync.Mutex
	patients map[int64]*patientState // what each patient's acknowledged writes add up to

	stale [numOps]atomic.Int64 // reads that missed the session's own write
	fresh [numOps]atomic.Int64 // reads that saw it

	// the cache in front of the store (cache.go); cacheMode off: none
	cacheStats  *cache.Stats
	cacheMode   cache.Mode
	cacheEngine string
}

// patientState is the independent computation of a patient's totals.
type patientState struct {
	total   atomic.Int64
	pending atomic.Int32 // writes in flight or with unknown outcome
	unknown atomic.Bool  // a write failed: it may or may not be applied
}

var (
	_ scenario.Workload   = (*Workload)(nil)
	_ scenario.Checker    = (*Workload)(nil)
	_ scenario.Reporter   = (*Workload)(nil)
	_ scenario.Composites = (*Workload)(nil)
	_ scenario.Limited    = (*Workload)(nil)
)

// Inflight bounds the operations at once: over HTTP to the connections
// the sessions share (mhealth.app_conns; 0: none), else to the pool of an
// embedded store without a cache in front (kit.StoreBound).
func (w *Workload) Inflight() (int, bool) {
	if w.http != nil {
		if w.http.shared != nil {
			return w.cfg.appConns, false
		}
		return 0, false
	}
	return w.embedded.Inflight()
}

// Operations names the operations.
func (w *Workload) Operations() []string { return append([]string(nil), operationNames...) }

// Composites describes activity.client, the composite of the patient's
// client.
func (w *Workload) Composites() map[string]string {
	return map[string]string{operationNames[OpActivityClient]: activityClient}
}

// LoadSize is the number of patients the load phase creates.
func (w *Workload) LoadSize() int64 {
	if !w.cfg.load {
		return 0
	}
	return w.cfg.patients
}

// Load creates mhealth.patients patients with `workers` goroutines.
func (w *Workload) Load(ctx context.Context, workers int, progress func(n int64)) error {
	n := w.LoadSize()
	if n == 0 {
		return nil
	}
	var next atomic.Int64
	errs := make(chan error, workers)
	for i := 0; i < workers; i++ {
		go func() {
			for {
				id := next.Add(1) - 1
				if id >= n {
					errs <- nil
					return
				}
				if err := w.base.createPatient(ctx, Patient{ID: id, Created: Epoch.UnixMilli(), Goals: DefaultGoals}); err != nil {
					errs <- fmt.Errorf("create patient %d: %w", id, err)
					return
				}
				w.state(id)
				progress(1)
			}
		}()
	}
	var first error
	for i := 0; i < workers; i++ {
		if err := <-errs; err != nil && first == nil {
			first = err
			next.Store(n) // stop the others
		}
	}
	if first != nil {
		return first
	}
	return w.st.settle(ctx)
}

// state returns the independent record of a patient, creating it.
func (w *Workload) state(id int64) *patientState {
	w.mu.Lock()
	defer w.mu.Unlock()
	ps, ok := w.patients[id]
	if !ok {
		ps = &patientState{}
		w.patients[id] = ps
	}
	return ps
}

// NewSession returns patient id's session.
func (w *Workload) NewSession(id uint64, seed uint64) scenario.Session {
	return newSession(w, int64(id), seed)
}

// Close releases the storage.
func (w *Workload) Close() error { return w.st.close() }

// Report gives the read-your-writes figures per read operation.
func (w *Workload) Report() map[string]any {
	stale, fresh := map[string]int64{}, map[string]int64{}
	for _, op := range []int{OpTotalsGet, OpAchievementsGet, OpPlanTailoring} {
		if n := w.stale[op].Load(); n > 0 || w.fresh[op].Load() > 0 {
			stale[operationNames[op]] = n
			fresh[operationNames[op]] = w.fresh[op].Load()
		}
	}
	r := map[string]any{"stale_reads": stale, "fresh_reads": fresh, "verified": w.cfg.verify,
		"note": "a stale read is a read that missed the same patient's acknowledged earlier write"}
	if w.cacheMode != "" && w.cacheMode != cache.Off {
		c := w.cacheStats.Report(w.cacheMode, w.cacheEngine)
		c["write_policy"], c["ttl"] = w.cfg.cacheWrite, w.cfg.cacheTTL.String()
		r["cache"] = c
	}
	if w.http != nil {
		r["http"] = w.http.counter.Report()
		r["app"] = w.http.base
	}
	return r
}

// Check reads every patient's total back from the store itself (past any
// cache and the app) once it has settled and compares it with the sum of that patient's acknowledged posts. Patients
// with a write of unknown outcome (a failed or unfinished post) are
// skipped: their write may or may not have been applied.
func (w *Workload) Check(ctx context.Context) error {
	if !w.cfg.verify {
		return nil
	}
	if err := w.st.settle(ctx); err != nil {
		return fmt.Errorf("mhealth check: settle: %w", err)
	}
	w.mu.Lock()
	ids := make([]int64, 0, len(w.patients))
	for id, ps := range w.patients {
		if ps.pending.Load() == 0 && !ps.unknown.Load() {
			ids = append(ids, id)
		}
	}
	w.mu.Unlock()
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var bad []string
	for _, id := range ids {
		want := w.patients[id].total.Load()
		got, err := w.base.totals(ctx, id)
		if errors.Is(err, engine.ErrNotFound) && want == 0 {
			continue
		}
		if err != nil {
			return fmt.Errorf("mhealth check: totals of patient %d: %w", id, err)
		}
		if got != want {
			bad = append(bad, fmt.Sprintf("patient %d: total %d, posted %d", id, got, want))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %d of %d patients' totals differ from their acknowledged posts (first: %s)", engine.ErrIntegrity, len(bad), len(ids), bad[0])
	}
	return nil
}

// OperationNames lists the scenario's operations, as run.json and
// experiment.json name them.
func OperationNames() []string { return append([]string(nil), operationNames[:]...) }
