// Package social is the "social" scenario: the users collection of a
// face-tagging photo app (the Radish study, the second in docs/studies.md) under
// the study's YCSB-style mixes, with keys chosen uniformly, by a Zipfian
// law, or by a walk over a Klemm-Eguiluz friendship graph.
//
// Mixes (social.mix):
//
//	d1  insert 0.00053, read 0.94286, update 0.05593, delete 0.00016, scan 0.00052 (from production)
//	d2  read 0.5, update 0.5
//
// The study ran 250,000 operations shared by all threads after loading
// 50,000 users: `scalelab run social --ops 250000` (StudyOps) runs that
// length; like every scenario, a run given no bound lasts 10 s.
//
// Users live in any engine with the engine.Records capability (store.go):
// the scenario has no storage code per engine.
package social

import (
	"github.com/scalelab/scalelab/scenario/kit"

	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/scalelab/scalelab/cache"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
)

// Name is the scenario's registry name.
const Name = "social"

// StudyOps is the study's operation count, shared by all users: the
// study's run length is --ops 250000 (the examples' study profiles).
const StudyOps = 250_000

// Operation indexes, in the order Workload.Operations returns their names.
const (
	OpRead = iota
	OpUpdate
	OpInsert
	OpDelete
	OpScan
	numOps
)

var operationNames = []string{"users.read", "users.update", "users.insert", "users.delete", "users.scan"}

// Setting keys.
const (
	KeyUsers         = "social.users"
	KeyMix           = "social.mix"
	KeyKeys          = "social.keys"
	KeyZipfian       = "social.zipfian_constant"
	KeyLocality      = "social.locality"
	KeyGraphM        = "social.graph_m"
	KeyGraphMu       = "social.graph_mu"
	KeyMaxScanLength = "social.max_scan_length"
	KeyLoad          = "social.load"
	KeySessionOps    = "social.session_ops"
)

// Key choosers (social.keys).
const (
	KeysUniform = "uniform"
	KeysZipfian = "zipfian"
	KeysSocial  = "social"
)

// mixes are the study's operation proportions.
var mixes = map[string][numOps]float64{
	"d1": {OpInsert: 0.00053, OpRead: 0.94286, OpUpdate: 0.05593, OpDelete: 0.00016, OpScan: 0.00052},
	"d2": {OpRead: 0.5, OpUpdate: 0.5},
}

func init() { scenario.Register(&Scenario{}) }

// Scenario is the social scenario. Its zero value is ready to use.
type Scenario struct{}

var _ scenario.Scenario = (*Scenario)(nil)

// Name returns "social".
func (*Scenario) Name() string { return Name }

// Operations names the operations its workloads run (scenario.Operator).
func (*Scenario) Operations() []string { return slices.Clone(operationNames) }

// Description is one line for `scalelab list`.
func (*Scenario) Description() string {
	return "social photo app: users collection, mixes d1/d2, uniform, zipfian or friend-walk keys over a Klemm-Eguiluz graph"
}

// Settings declares the scenario's settings, and the cache settings it
// honours (cache.go).
func (*Scenario) Settings() []setting.Spec {
	return append([]setting.Spec{
		{Key: KeyUsers, Kind: setting.Int, Default: "50000", Min: 1, Max: 100_000_000,
			Description: "users loaded (the study: 50,000)"},
		{Key: KeyMix, Kind: setting.Enum, Default: "d1", Allowed: []string{"d1", "d2"},
			Description: "operation mix: d1 read 0.94286 update 0.05593 insert 0.00053 scan 0.00052 delete 0.00016 (production); d2 read 0.5 update 0.5"},
		{Key: KeyKeys, Kind: setting.Enum, Default: KeysUniform, Allowed: []string{KeysUniform, KeysZipfian, KeysSocial},
			Description: "key chooser: uniform (the study's default), zipfian (scrambled over the loaded users), social (a walk over the friendship graph)"},
		{Key: KeyZipfian, Kind: setting.Float, Default: "0.99", Check: kit.Between(0, 1),
			Description: "skew of the zipfian chooser, in (0, 1)"},
		{Key: KeyLocality, Kind: setting.Float, Default: "0.9", Min: 0, Max: 1,
			Description: "social chooser: probability that the next user is a friend of the current one (else a uniform jump)"},
		{Key: KeyGraphM, Kind: setting.Int, Default: "10", Min: 1, Max: 1000,
			Description: "social chooser: Klemm-Eguiluz active nodes m; each new user befriends m users, mean degree 2m"},
		{Key: KeyGraphMu, Kind: setting.Float, Default: "0.1", Min: 0, Max: 1,
			Description: "social chooser: Klemm-Eguiluz probability mu that a link goes to a random (degree-preferential) user: 0 highly clustered, larger shortens paths"},
		{Key: KeyMaxScanLength, Kind: setting.Int, Default: "100", Min: 1, Max: 10000,
			Description: "longest scan in users; lengths are uniform in [1, max]"},
		{Key: KeyLoad, Kind: setting.Bool, Default: "true",
			Description: "load the users before the run (recreating the collection); false runs against users already loaded"},
		{Key: KeySessionOps, Kind: setting.Int, Default: "0", Min: 0, Max: 1e15,
			Description: "operations per session, after which it ends and a new one starts at a random user; 0 never ends (set it for the phases model)"},
	}, cache.DirectSpecs()...)
}

// Engines lists the engines with the engine.Records capability, sorted.
func (*Scenario) Engines() []string { return scenario.RecordEngines() }

// config is the resolved scenario configuration.
type config struct {
	users      uint64
	mix        string
	props      [numOps]float64
	keys       string
	theta      float64
	locality   float64
	m          int
	mu         float64
	maxScan    int
	load       bool
	sessionOps uint64
}

// maxGraphLinks bounds users x m for the social chooser (32-bit offsets).
const maxGraphLinks = 1 << 30

func configFrom(set *setting.Set) (*config, error) {
	if err := kit.RequireSettings(Name, set, (&Scenario{}).Settings()); err != nil {
		return nil, err
	}
	c := &config{
		users:      uint64(set.Get(KeyUsers).Int()),
		mix:        set.Get(KeyMix).String(),
		keys:       set.Get(KeyKeys).String(),
		theta:      set.Get(KeyZipfian).Float(),
		locality:   set.Get(KeyLocality).Float(),
		m:          int(set.Get(KeyGraphM).Int()),
		mu:         set.Get(KeyGraphMu).Float(),
		maxScan:    int(set.Get(KeyMaxScanLength).Int()),
		load:       set.Get(KeyLoad).Bool(),
		sessionOps: uint64(set.Get(KeySessionOps).Int()),
	}
	props, ok := mixes[c.mix]
	if !ok {
		return nil, fmt.Errorf("%w: %s=%s: allowed d1, d2", setting.ErrBadValue, KeyMix, c.mix)
	}
	c.props = props
	if c.keys == KeysSocial && c.users*uint64(c.m) > maxGraphLinks {
		return nil, fmt.Errorf("%w: %s=%d with %s=%d: the friendship graph would have %d links; at most %d (lower one of them)",
			setting.ErrBadValue, KeyUsers, c.users, KeyGraphM, c.m, c.users*uint64(c.m), maxGraphLinks)
	}
	return c, nil
}

// Open resolves the settings, opens the engine's storage (recreating the
// collection when social.load is true) and, for the social chooser, builds
// the friendship graph over the users.
func (s *Scenario) Open(ctx context.Context, env scenario.Env) (scenario.Workload, error) {
	cfg, err := configFrom(env.Settings)
	if err != nil {
		return nil, err
	}
	col, err := scenario.OpenCollection(ctx, Name, env, engine.CollectionSpec{Name: usersCollection, Fields: userFields, Recreate: cfg.load})
	if err != nil {
		return nil, err
	}
	st := &store{c: col}
	w := &Workload{cfg: cfg, st: st, seed: env.Seed, ks: newKeyspace(cfg.users), ops: kit.NewChooser(cfg.props[:])}
	w.null = errors.Is(col.ReadBack(ctx, nil, engine.AllFields, new(engine.Rows)), errors.ErrUnsupported)
	tr := col.Traits()
	if tr.NoScans && (cfg.props[OpScan] > 0 || !cfg.load) {
		col.Close()
		return nil, fmt.Errorf("social with %s=%s and %s=%t needs scans or counts, and %s cannot (it reads and writes by key only): %w; use %s=d2 with %s=true, or an engine that scans",
			KeyMix, cfg.mix, KeyLoad, cfg.load, env.Engine, scenario.ErrEngineNotSupported, KeyMix, KeyLoad)
	}
	w.strict, w.keyOrdered, w.tellsMissing, w.noCount = tr.ReadsOwnWrites, tr.KeyOrderedScans, tr.TellsMissing, tr.NoScans
	w.ks.seg = env.Segment
	if env.Segment.Split() {
		// Other segments insert and delete users this one does not know
		// of: a missing user may be theirs to delete, and the total count
		// is theirs too. The acknowledged-write audit still judges this
		// segment's own writes.
		w.strict = false
	}
	w.baseCount = int64(cfg.users)
	if !cfg.load {
		n, err := st.count(ctx)
		if err != nil {
			st.close()
			return nil, fmt.Errorf("social on %s: count users already loaded: %w", env.Engine, err)
		}
		w.baseCount = n
		// Inserts continue after the highest user number stored, so that
		// they do not collide with users an earlier run inserted.
		last, err := st.maxKey(ctx)
		if err != nil {
			st.close()
			return nil, fmt.Errorf("social on %s: find the last user: %w", env.Engine, err)
		}
		if k, ok := KeyNumber(last); ok && k >= cfg.users && !env.Segment.Split() {
			w.ks.skipTo(k + 1)
		}
	}
	switch cfg.keys {
	case KeysZipfian:
		w.zipf = kit.NewZipfian(cfg.users, cfg.theta, kit.Zeta(cfg.users, cfg.theta))
	case KeysSocial:
		if w.graph, err = BuildKE(int(cfg.users), cfg.m, cfg.mu, env.Seed); err != nil {
			st.close()
			return nil, fmt.Errorf("%w: %w", setting.ErrBadValue, err)
		}
		w.graphStats = graphStats(w.graph)
	}
	if w.cache, err = openCache(ctx, env); err != nil {
		st.close()
		return nil, err
	}
	w.StoreBound = kit.InProcessBound(env, w.cache != nil)
	return w, nil
}

// Workload is an opened social workload.
type Workload struct {
	cfg        *config
	st         *store
	seed       uint64
	ks         *keyspace
	ops        kit.Chooser
	zipf       kit.Zipfian
	graph      *Graph
	graphStats map[string]any
	baseCount  int64 // users in the store before the run
	null       bool  // the null engine: nothing stored, nothing to check
	strict     bool  // reads see every acknowledged write: a missing loaded user is a lost write
	keyOrdered bool  // scans return users in key order (else in the store's own order)
	// tellsMissing: update and delete of a missing user fail with
	// engine.ErrNotFound (else they succeed, as Cassandra's upserts do).
	tellsMissing bool
	noCount      bool                // the store cannot count (memcached): Check reads the sample only
	cache        *kit.VersionedCache // the cache in front of the store (cache.go); nil without one
	// StoreBound holds the operations to an embedded store's statements
	// (scenario.Limited): each reads or writes one user at a time
	kit.StoreBound

	// Walk statistics.
	starts, friendSteps, jumps, deadEnds atomic.Int64
	// Key bookkeeping.
	insertsOK, insertsFailed                 atomic.Int64
	deletesOK, deletesMissing, deletesFailed atomic.Int64
	notFoundGone, notFoundInserted           atomic.Int64
}

var _ scenario.Workload = (*Workload)(nil)
var _ scenario.Checker = (*Workload)(nil)
var _ scenario.Limited = (*Workload)(nil)
var _ scenario.Reporter = (*Workload)(nil)

// Graph returns the friendship graph (nil unless social.keys=social).
func (w *Workload) Graph() *Graph { return w.graph }

// Operations returns users.read, users.update, users.insert, users.delete,
// users.scan.
func (w *Workload) Operations() []string { return slices.Clone(operationNames) }

// LoadSize is social.users when social.load is true, else 0.
func (w *Workload) LoadSize() int64 {
	if !w.cfg.load {
		return 0
	}
	return int64(w.cfg.users)
}

// Close releases what the storage holds (not the engine connection).
func (w *Workload) Close() error { return w.st.close() }

// loadBatchSize is how many users Load hands the store at once.
const loadBatchSize = 1000

// Load inserts users 0..users-1 split into contiguous ranges, one per
// worker, in batches; users derive from the seed and their number only, so
// the data does not depend on the number of workers.
func (w *Workload) Load(ctx context.Context, workers int, progress func(n int64)) error {
	if !w.cfg.load || w.cfg.users == 0 {
		return nil
	}
	err := scenario.LoadRanges(ctx, int64(w.cfg.users), workers, loadBatchSize, progress, func() func(context.Context, int64, int64) error {
		batch := make([]User, 0, loadBatchSize)
		return func(ctx context.Context, lo, hi int64) error {
			batch = batch[:0]
			for k := lo; k < hi; k++ {
				batch = append(batch, NewUser(w.seed, uint64(k)))
			}
			return w.st.insertBatch(ctx, batch)
		}
	})
	if err != nil {
		return fmt.Errorf("social load: %w", err)
	}
	return w.st.afterLoad(ctx)
}

// graphStats summarises the graph for the report.
func graphStats(g *Graph) map[string]any {
	return map[string]any{
		"nodes":           g.Nodes(),
		"edges":           g.Edges(),
		"m":               g.M,
		"mu":              g.Mu,
		"mean_degree":     g.MeanDegree(),
		"max_degree":      g.MaxDegree(),
		"clustering":      g.Clustering(),
		"degree_exponent": g.DegreeExponent(3 * g.M),
		"mean_distance":   g.MeanDistance(8, 1),
		"build_ms":        float64(g.Build.Microseconds()) / 1000,
	}
}

// Report returns the graph's figures and the walk's statistics (social
// chooser), the bookkeeping of users inserted and deleted, and the
// cache's figures (with a cache).
func (w *Workload) Report() map[string]any {
	out := map[string]any{
		"users": map[string]any{
			"loaded":             w.cfg.users,
			"inserted":           w.insertsOK.Load(),
			"insert_failed":      w.insertsFailed.Load(),
			"deleted":            w.deletesOK.Load(),
			"delete_not_found":   w.deletesMissing.Load(),
			"delete_failed":      w.deletesFailed.Load(),
			"not_found_deleted":  w.notFoundGone.Load(),
			"not_found_inserted": w.notFoundInserted.Load(),
		},
		"key_chooser": w.cfg.keys,
	}
	if w.graph != nil {
		out["graph"] = w.graphStats
		friend, jumps, dead, starts := w.friendSteps.Load(), w.jumps.Load(), w.deadEnds.Load(), w.starts.Load()
		steps := friend + jumps + dead + starts
		walk := map[string]any{"steps": steps, "starts": starts, "friend_steps": friend, "random_jumps": jumps,
			"dead_ends": dead, "locality": w.cfg.locality}
		if steps > 0 {
			walk["friend_share"] = float64(friend) / float64(steps)
		}
		out["walk"] = walk
	}
	if w.cache != nil {
		out["cache"] = w.cache.Report()
	}
	return out
}

// checkSample is how many users Check reads back.
const checkSample = 200

// Check counts the users in the store against the loaded, inserted and
// deleted ones (operations that failed without a definite answer widen
// the tolerance) and, after a load, reads back a sample of users that
// must exist. A difference wraps engine.ErrIntegrity.
//
// With consistency levels that let a read miss an acknowledged write
// (Cassandra with R + W <= RF), the counts may lag: Check then does
// nothing. A store that cannot count (memcached) gets the sample only.
func (w *Workload) Check(ctx context.Context) error {
	if w.null || !w.strict {
		return nil
	}
	if !w.noCount {
		if err := w.checkCount(ctx); err != nil {
			return err
		}
	}
	if !w.cfg.load {
		return nil
	}
	var u User
	step := max(w.cfg.users/checkSample, 1)
	for k := uint64(0); k < w.cfg.users; k += step {
		if w.ks.isGone(k) {
			continue
		}
		key := Key(k)
		if err := w.st.read(ctx, key, &u); err != nil {
			if errors.Is(err, engine.ErrNotFound) {
				return fmt.Errorf("%w: social check: user %s was loaded and never deleted but is missing", engine.ErrIntegrity, key)
			}
			return fmt.Errorf("social check: read %s: %w", key, err)
		}
		if err := w.verify(k, &u); err != nil {
			return fmt.Errorf("social check: %w", err)
		}
	}
	return nil
}

// checkCount counts the users in the store against the loaded, inserted
// and deleted ones (Check).
func (w *Workload) checkCount(ctx context.Context) error {
	n, err := w.st.count(ctx)
	if err != nil {
		return fmt.Errorf("social check: count users: %w", err)
	}
	want := w.baseCount + w.insertsOK.Load() - w.deletesOK.Load()
	slack := w.insertsFailed.Load() + w.deletesFailed.Load()
	if n < want-slack || n > want+slack {
		return fmt.Errorf("%w: social check: %d users stored, want %d (%d before the run, %d inserted, %d deleted; %d writes failed without a definite answer)",
			engine.ErrIntegrity, n, want, w.baseCount, w.insertsOK.Load(), w.deletesOK.Load(), slack)
	}
	return nil
}

// verify checks that u, read as user number n, is that user.
func (w *Workload) verify(n uint64, u *User) error {
	if w.null {
		return nil
	}
	if want := Key(n); u.ID != want {
		return fmt.Errorf("%w: read of %s returned user %s", engine.ErrIntegrity, want, u.ID)
	}
	if want := nameOf(w.seed, n); u.Name != want {
		return fmt.Errorf("%w: user %s is named %q, want %q", engine.ErrIntegrity, u.ID, clip(u.Name), want)
	}
	return nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// OperationNames lists the scenario's operations, as run.json and
// experiment.json name them.
func OperationNames() []string { return append([]string(nil), operationNames[:]...) }
