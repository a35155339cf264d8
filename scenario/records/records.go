// Package records is the patient-records site (the Whispr study): patients
// sign up, keep a medical record, search providers and grant or revoke
// their access, and delete their account; providers search patients, ask
// for access and read the records they hold a grant for. It runs as a real
// web application over HTTP: by default an app server in the scalelab
// process on loopback (package app), or one given by records.app; its
// sessions are browsers (package httpload) with cookies and CSRF tokens.
// Each session checks the site's access rules as it goes, and a leak fails
// the run. See docs/scenarios/records.md.
package records

import (
	"context"
	"crypto/rand"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/scalelab/scalelab/app"
	"github.com/scalelab/scalelab/cache"
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/httpload"
	"github.com/scalelab/scalelab/lru"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/kit"
	"github.com/scalelab/scalelab/setting"
)

// Name is the scenario's registry name.
const Name = "records"

// Setting keys.
const (
	KeyProviders   = "records.providers"
	KeyPatients    = "records.patients"
	KeyLoad        = "records.load"
	KeyIndexes     = "records.indexes"
	KeyEager       = "records.eager"
	KeyColumnTypes = "records.column_types"
	KeyBcryptCost  = "records.bcrypt_cost"
	KeyMix         = "records.mix"
	KeyThinkPage   = "records.think_page"
	KeyThinkForm   = "records.think_form"
	KeyCSRFProbe   = "records.csrf_probe"
	KeyApp         = "records.app"
	KeyMaxInFlight = "records.max_inflight"
	KeyMaxQueue    = "records.max_queue"
	KeyTimeout     = "records.request_timeout"
	KeySecretFile  = "records.secret_file"
	KeyETag        = "records.etag"
	KeySearchChars = "records.search_chars"
	KeyRevisit     = "records.revisit"
	KeyDBBound     = "records.db_bound"
	kindSignup     = "signup"
	kindProvider   = "provider"
	kindReturning  = "returning"
	// MixStudy is the records.mix of the study's session alone.
	MixStudy        = "study"
	defaultMixValue = "signup:6,provider:3,returning:1"
)

func init() { scenario.Register(&Scenario{}) }

// Scenario is the records scenario.
type Scenario struct{}

var _ scenario.Scenario = (*Scenario)(nil)

// Name is "records".
func (*Scenario) Name() string { return Name }

// Operations names the operations its workloads run (scenario.Operator).
func (*Scenario) Operations() []string { return append([]string(nil), opNames...) }

// Description is one line for `scalelab list`.
func (*Scenario) Description() string {
	return "patient-records web site (Whispr) over HTTP: sign-up, medical record, provider search, access grants, account deletion"
}

// Settings declares the scenario's settings.
func (*Scenario) Settings() []setting.Spec {
	return []setting.Spec{
		{Key: KeyProviders, Kind: setting.Int, Default: "10000", Min: 10, Max: 10_000_000, Description: "providers in the seed"},
		{Key: KeyPatients, Kind: setting.Int, Default: "5000", Min: 8, Max: 10_000_000, Description: "patients in the seed, each granting one provider access"},
		{Key: KeyLoad, Kind: setting.Bool, Default: "true", Description: "recreate the tables and load the seed before the run; false keeps the loaded seed and only removes what earlier runs added"},
		{Key: KeyIndexes, Kind: setting.Bool, Default: "true", Description: "indexes on names and on the grants' patient and provider (false: provider search is a sequential scan)"},
		{Key: KeyEager, Kind: setting.Bool, Default: "false", Description: "the providers page reads its 5 providers and their sharing in one query (false: one query per provider, N+1)"},
		{Key: KeyColumnTypes, Kind: setting.Enum, Default: "varchar", Allowed: []string{"varchar", "text"}, Description: "string columns as varchar(255) (Rails' string) or text"},
		{Key: KeyBcryptCost, Kind: setting.Int, Default: "10", Min: 4, Max: 14, Description: "bcrypt cost of sign-up and sign-in (each step doubles the CPU a sign-up takes)"},
		{Key: KeyMix, Kind: setting.String, Default: defaultMixValue, Check: func(v setting.Value) error { _, _, err := parseMix(v.Raw); return err },
			Description: "the sessions: study (the study's 11-request path alone: sign-up, record, exact-name provider search, share, profile, my providers, delete account), or weights of the richer kinds: signup (a new patient's visit with a provider's access checks), provider, returning (a seeded patient answering requests)"},
		{Key: KeyThinkPage, Kind: setting.Duration, Default: "2s", Min: 0, Max: 600, Description: "think time before a page: uniform up to this"},
		{Key: KeyThinkForm, Kind: setting.Duration, Default: "5s", Min: 0, Max: 600, Description: "think time before a form post: uniform up to this"},
		{Key: KeyCSRFProbe, Kind: setting.Float, Default: "0.2", Min: 0, Max: 1, Description: "share of sign-up sessions that first post the form without its CSRF token (the site must refuse it)"},
		{Key: KeyApp, Kind: setting.String, Default: "", Check: kit.AppURL, Description: "URL of a running records site (scalelab serve, or a balancer in front of several); empty: an app server in this process on loopback"},
		{Key: KeyMaxInFlight, Kind: setting.Int, Default: "16", Min: 0, Max: 100000, Description: "requests the in-process app server works on at once (the others queue); 0: unbounded"},
		{Key: KeyMaxQueue, Kind: setting.Int, Default: "0", Min: 0, Max: 1_000_000, Description: "requests the in-process app server lets wait for a worker; one more is answered 503 at once (0: unbounded, a request waits up to records.request_timeout)"},
		{Key: KeyTimeout, Kind: setting.Duration, Default: "30s", Min: 0.001, Max: 3600, Description: "request timeout, of the app server and of the load generator's browsers"},
		{Key: KeySecretFile, Kind: setting.String, Default: "", Description: "file (mode 0600) with the secret that signs session cookies; empty: a random one for this process (every app server behind one balancer needs the same)"},
		{Key: KeyETag, Kind: setting.Enum, Default: etagOff, Allowed: []string{etagOff, etagGlobal, etagNarrow}, Description: "HTTP 304s for signed-in pages: off; global (the ETag covers every user and grant, one query per page: any write anywhere changes it); narrow (the viewer's own row and grants)"},
		{Key: KeySearchChars, Kind: setting.Int, Default: "6", Min: 0, Max: 64, Description: "characters of a provider's name a patient types into search (0: the whole name, so that searches rarely repeat)"},
		{Key: KeyRevisit, Kind: setting.Float, Default: "0.1", Min: 0, Max: 0.9, Description: "share of page views followed by a reload of the same page (the back button, a refresh), sent with the page's ETag"},
		{Key: KeyDBBound, Kind: setting.Bool, Default: "false", Description: "make the database the bottleneck on a small machine (a departure from the study, see docs/scenarios/records.md): bcrypt cost 4, 200,000 providers and 100,000 patients, and a providers page of 25 providers ordered by name, unless records.bcrypt_cost, records.providers or records.patients are given"},
		cache.SpecMode(), cache.SpecLocalSize(), cache.SpecSearchTTL(),
	}
}

var _ scenario.TierUser = (*Scenario)(nil)

// Tiers declares the cache tier.
func (*Scenario) Tiers() []scenario.TierSpec {
	return []scenario.TierSpec{{Role: scenario.RoleCache,
		Description: "the site's shared cache (cache.mode=shared): page fragments, the home page, provider search results"}}
}

var openers = kit.Storage[struct{}, db]{}

// Engines lists the engines the site runs on.
func (*Scenario) Engines() []string { return openers.Engines() }

// config is the scenario's settings, read once.
type config struct {
	providers, patients int
	load, indexes       bool
	eager               bool
	text                string
	cost                int
	mix                 [3]float64 // cumulative weights: signup, provider, returning
	study               bool       // records.mix=study: the study's path alone
	dbBound             bool       // records.db_bound
	pageProviders       int        // providers on the providers page
	pageByName          bool       // the providers page orders them by name (else by id)
	thinkPage           time.Duration
	thinkForm           time.Duration
	csrfProbe           float64
	app                 string
	maxInFlight         int
	maxQueue            int
	timeout             time.Duration
	secretFile          string
	etag                string
	searchChars         int
	revisit             float64
	localSize           int64
	searchTTL           time.Duration
}

// pick chooses a session kind from u in [0, 1).
func (c *config) pick(u float64) string {
	total := c.mix[2]
	switch {
	case u*total < c.mix[0]:
		return kindSignup
	case u*total < c.mix[1]:
		return kindProvider
	default:
		return kindReturning
	}
}

func configFrom(set *setting.Set) (*config, error) {
	c := &config{
		providers: int(set.Get(KeyProviders).Int()), patients: int(set.Get(KeyPatients).Int()),
		load: set.Get(KeyLoad).Bool(), indexes: set.Get(KeyIndexes).Bool(), eager: set.Get(KeyEager).Bool(),
		text: "varchar(255)", cost: int(set.Get(KeyBcryptCost).Int()),
		thinkPage: set.Get(KeyThinkPage).Duration(), thinkForm: set.Get(KeyThinkForm).Duration(),
		csrfProbe: set.Get(KeyCSRFProbe).Float(), app: set.Get(KeyApp).String(),
		maxInFlight: int(set.Get(KeyMaxInFlight).Int()), maxQueue: int(set.Get(KeyMaxQueue).Int()), timeout: set.Get(KeyTimeout).Duration(),
		secretFile: set.Get(KeySecretFile).String(), etag: set.Get(KeyETag).String(),
		searchChars: int(set.Get(KeySearchChars).Int()), revisit: set.Get(KeyRevisit).Float(), localSize: set.Get(cache.KeyLocalSize).Int(),
		searchTTL: set.Get(cache.KeySearchTTL).Duration(),
	}
	if set.Get(KeyColumnTypes).String() == "text" {
		c.text = "text"
	}
	c.pageProviders = 5
	if c.dbBound = set.Get(KeyDBBound).Bool(); c.dbBound {
		c.dbBind(set)
	}
	var err error
	if c.study, c.mix, err = parseMix(set.Get(KeyMix).String()); err != nil {
		return nil, fmt.Errorf("%w: %s=%q: %v", setting.ErrBadValue, KeyMix, set.Get(KeyMix).String(), err)
	}
	return c.finish()
}

// parseMix reads records.mix: "study", or cumulative weights of the
// session kinds signup, provider and returning.
func parseMix(raw string) (study bool, mix [3]float64, err error) {
	if strings.TrimSpace(raw) == MixStudy {
		return true, [3]float64{1, 1, 1}, nil
	}
	weights := map[string]float64{}
	for _, part := range strings.Split(raw, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, v, ok := strings.Cut(part, ":")
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		k = strings.TrimSpace(k)
		if !ok || err != nil || !(f >= 0) || math.IsInf(f, 0) || (k != kindSignup && k != kindProvider && k != kindReturning) {
			hint := ""
			if n := setting.Nearest(k, []string{MixStudy, kindSignup, kindProvider, kindReturning}); n != "" && n != k {
				hint = fmt.Sprintf(" (did you mean %q?)", n)
			}
			return false, mix, fmt.Errorf("allowed: %s (the study's session alone) or kind:weight,... with kinds signup, provider, returning (e.g. %s)%s", MixStudy, defaultMixValue, hint)
		}
		weights[k] = f
	}
	mix[0] = weights[kindSignup]
	mix[1] = mix[0] + weights[kindProvider]
	mix[2] = mix[1] + weights[kindReturning]
	if mix[2] <= 0 || math.IsInf(mix[2], 0) {
		return false, mix, fmt.Errorf("the weights add up to %g; allowed: a finite sum over 0", mix[2])
	}
	return false, mix, nil
}

// DB-bound figures (records.db_bound): the app's CPU per sign-up drops
// about 60-fold, the tables grow 20-fold and the providers page reads 5
// times as many providers, in name order.
const (
	dbBoundCost          = 4
	dbBoundProviders     = 200_000
	dbBoundPatients      = 100_000
	dbBoundPageProviders = 25
)

// dbBind applies records.db_bound to the settings not given.
func (c *config) dbBind(set *setting.Set) {
	if !set.Given(KeyBcryptCost) {
		c.cost = dbBoundCost
	}
	if !set.Given(KeyProviders) {
		c.providers = dbBoundProviders
	}
	if !set.Given(KeyPatients) {
		c.patients = dbBoundPatients
	}
	c.pageProviders, c.pageByName = dbBoundPageProviders, true
}

// finish checks the app server's bounds and records.app.
func (c *config) finish() (*config, error) {
	if err := (app.Config{MaxInFlight: c.maxInFlight, MaxQueue: c.maxQueue}).Check(); err != nil {
		return nil, fmt.Errorf("%w: %s, %s: %v", setting.ErrBadValue, KeyMaxInFlight, KeyMaxQueue, err)
	}
	if c.app != "" {
		base, err := httpload.Base(c.app)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", setting.ErrBadValue, KeyApp, err)
		}
		c.app = base
	}
	return c, nil
}

// store is the site's store on d.
func (c *config) store(d db) *store {
	return &store{db: d, eager: c.eager, pageN: c.pageProviders, pageByName: c.pageByName}
}

// openDB reads the site's configuration from env's settings and opens its
// database on env's engine.
func openDB(ctx context.Context, env scenario.Env) (*config, db, error) {
	cfg, err := configFrom(env.Settings)
	if err != nil {
		return nil, nil, err
	}
	d, err := openers.Open(ctx, Name, env, struct{}{})
	if err != nil {
		return nil, nil, err
	}
	return cfg, d, nil
}

// Open prepares the site on the engine: the store, and unless records.app
// names a running site, an app server on loopback. Tables are made by
// Load (records.load).
func (s *Scenario) Open(ctx context.Context, env scenario.Env) (scenario.Workload, error) {
	if err := kit.RequireSettings(Name, env.Settings, s.Settings()); err != nil {
		return nil, err
	}
	cfg, d, err := openDB(ctx, env)
	if err != nil {
		return nil, err
	}
	w := &workload{cfg: cfg, st: cfg.store(d), counter: httpload.NewCounter(), base: cfg.app, cacheStats: cache.NewStats()}
	if env.ReadBackOnly {
		return w, nil
	}
	if cfg.app != "" {
		// checked before the load, as an engine is when it connects
		if err := httpload.Reachable(ctx, cfg.app, app.HealthPath, 10*time.Second); err != nil {
			d.close()
			return nil, fmt.Errorf("%s %s (--app): %w; start the site first (scalelab serve records, or scalelab cluster up app) or fix the URL", KeyApp, cfg.app, err)
		}
	}
	if t, ok := env.Tier(scenario.RoleCache); ok && cfg.app != "" {
		// the app servers cache in it; their responses say what it did
		w.cacheMode, w.cacheEngine = cache.Shared, t.Engine
	}
	if !cfg.load && !env.Segment.Split() {
		// back to the seed without reloading it: what earlier runs added
		// goes (their sign-ups and grants would collide with this run's
		// emails and audit keys); a divided test's segments leave this to
		// the setup run that loads
		if err := w.st.resetToSeed(ctx, cfg.providers+cfg.patients, cfg.patients); err != nil {
			return nil, fmt.Errorf("records: reset to the seed: %w", err)
		}
	}
	if cfg.app == "" {
		secret, err := Secret(cfg.secretFile)
		if err != nil {
			return nil, err
		}
		w.site = newSite(w.st, secret, cfg.cost)
		w.site.leak = leakForTests
		if w.site.cache, w.cacheMode, w.cacheEngine, err = openCache(ctx, env, cfg, true); err != nil {
			return nil, err
		}
		w.site.cache.unsafe = unsafeCacheForTests
		w.st.touch = w.site.cache.touches()
		w.srv = app.New(w.site.Handler(), app.Config{MaxInFlight: cfg.maxInFlight, MaxQueue: cfg.maxQueue, RequestTimeout: cfg.timeout})
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("records: app server: %w", err)
		}
		w.srv.Start(l)
		w.base = w.srv.URL()
	}
	return w, nil
}

// leakForTests makes in-process sites serve records without checking
// grants: only this package's tests set it.
var leakForTests bool

// Secret reads the cookie-signing secret from a 0600 file, or makes a
// random one when file is "".
func Secret(file string) ([]byte, error) {
	if file == "" {
		b := make([]byte, 32)
		_, err := rand.Read(b)
		return b, err
	}
	v, err := cluster.ReadSecret(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", setting.ErrBadValue, KeySecretFile, err)
	}
	if len(v) < 16 {
		return nil, fmt.Errorf("%w: %s: the secret in %s is shorter than 16 characters", setting.ErrBadValue, KeySecretFile, file)
	}
	return []byte(v), nil
}

var _ scenario.Server = (*Scenario)(nil)

// Handler opens the site on a connected engine for `scalelab serve`: the
// store (no load: a run against the site loads it), and the site's routes.
func (*Scenario) Handler(ctx context.Context, env scenario.Env) (http.Handler, error) {
	cfg, d, err := openDB(ctx, env)
	if err != nil {
		return nil, err
	}
	secret, err := Secret(cfg.secretFile)
	if err != nil {
		return nil, err
	}
	site := newSite(cfg.store(d), secret, cfg.cost)
	if site.cache, _, _, err = openCache(ctx, env, cfg, false); err != nil {
		return nil, err
	}
	site.st.touch = site.cache.touches()
	return site.Handler(), nil
}

// openCache opens the site's cache of cache.mode; fresh empties a shared
// cache's namespace (a run's in-process site starts cold; app servers
// share what is there).
func openCache(ctx context.Context, env scenario.Env, cfg *config, fresh bool) (siteCache, cache.Mode, string, error) {
	t, haveTier := env.Tier(scenario.RoleCache)
	mode, err := cache.ModeOf(env.Settings, haveTier)
	if err != nil {
		return siteCache{}, "", "", err
	}
	c := siteCache{searchTTL: cfg.searchTTL, etag: cfg.etag}
	kv, err := cache.Open(ctx, cache.Config{Mode: mode, LocalSize: cfg.localSize, Tier: t.Conn, Engine: t.Engine, Namespace: Name, Fresh: fresh})
	if err != nil {
		return c, "", "", fmt.Errorf("records: %w", err)
	}
	c.kv = kv
	if mode != cache.Shared {
		t.Engine = ""
	}
	return c, mode, t.Engine, nil
}

// workload is an opened records site.
type workload struct {
	cfg     *config
	st      *store
	site    *Site
	srv     *app.Server
	base    string
	counter *httpload.Counter
	// cacheStats counts the cache's hits and misses (from the responses'
	// X-Cache and Server-Timing) and stale reads; cacheMode and
	// cacheEngine are the in-process site's cache ("" for app servers).
	cacheStats  *cache.Stats
	cacheMode   cache.Mode
	cacheEngine string
}

var (
	_ scenario.Workload       = (*workload)(nil)
	_ scenario.Reporter       = (*workload)(nil)
	_ scenario.MeasureStarter = (*workload)(nil)
	_ scenario.RegisterReader = (*workload)(nil)
)

// Operations names the requests.
func (w *workload) Operations() []string { return append([]string(nil), opNames...) }

// LoadSize is the seed's users and grants.
func (w *workload) LoadSize() int64 {
	if !w.cfg.load {
		return 0
	}
	return int64(w.cfg.providers + 2*w.cfg.patients)
}

// Load recreates the tables and loads the seed (one password hash for
// every seeded user).
func (w *workload) Load(ctx context.Context, _ int, progress func(n int64)) error {
	if !w.cfg.load {
		return nil
	}
	if err := w.st.db.schema(ctx, schemaStmts(w.st.db.dialect(), w.cfg.text, w.cfg.indexes)); err != nil {
		return fmt.Errorf("records: create tables: %w", err)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(SeedPassword), w.cfg.cost)
	if err != nil {
		return fmt.Errorf("records: seed password: %w", err)
	}
	return w.seed(ctx, string(hash), progress)
}

// MeasureStarted makes the responses per second count from the load's start.
func (w *workload) MeasureStarted(t time.Time) { w.counter.SetStart(t) }

// NewSession returns a browser (a patient's or a provider's visit).
func (w *workload) NewSession(id, seed uint64) scenario.Session { return newSession(w, id, seed) }

// Close stops the in-process app server (in-flight requests finish).
func (w *workload) Close() error {
	if w.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), w.cfg.timeout+5*time.Second)
		defer cancel()
		if err := w.srv.Shutdown(ctx); err != nil {
			return err
		}
	}
	w.st.db.close()
	return nil
}

// Report gives the HTTP responses by operation, status and second, and
// the in-process app server's own counts.
func (w *workload) Report() map[string]any {
	r := map[string]any{"http": w.counter.Report(), "app": w.cfg.app}
	if w.cfg.dbBound {
		r["db_bound"] = map[string]any{"bcrypt_cost": w.cfg.cost, "providers": w.cfg.providers, "patients": w.cfg.patients,
			"providers_page": fmt.Sprintf("%d providers by name", w.cfg.pageProviders),
			"note":           "records.db_bound: the values in use (explicitly given settings win over the database-bound ones)"}
	}
	if h, m, st := w.cacheStats.Totals(); h+m+st > 0 || (w.cacheMode != "" && w.cacheMode != cache.Off) {
		c := w.cacheStats.Report(w.cacheMode, w.cacheEngine)
		c["etag"], c["search_ttl"] = w.cfg.etag, w.cfg.searchTTL.String()
		if w.cacheMode == cache.Local {
			c["local_size"] = w.cfg.localSize
		}
		if w.site != nil {
			if l, ok := w.site.cache.kv.(*lru.Cache); ok {
				n, b, ev := l.Usage()
				c["local_entries"], c["local_bytes"], c["local_evictions"] = n, b, ev
			}
		}
		r["cache"] = c
	}
	if w.srv != nil {
		r["app"] = map[string]any{"servers": 1, "in_process": true, "url": w.base, "max_inflight": w.cfg.maxInFlight,
			"max_queue": w.cfg.maxQueue, "queue_full_503": w.srv.Shed(),
			"request_timeout": w.cfg.timeout.String(), "responses": w.srv.Codes()}
	}
	return r
}

// ReadVersions reads the registers' versions: users' and grants' rows.
func (w *workload) ReadVersions(ctx context.Context, keys, versions []int64) error {
	var uk, gk []int64
	var ui, gi []int
	for i, k := range keys {
		if k >= grantKeyBase {
			gk, gi = append(gk, k), append(gi, i)
		} else {
			uk, ui = append(uk, k), append(ui, i)
		}
	}
	for _, part := range []struct {
		table string
		keys  []int64
		at    []int
	}{{"rc_users", uk, ui}, {"rc_grants", gk, gi}} {
		out := make([]int64, len(part.keys))
		if err := w.st.versions(ctx, part.table, part.keys, out); err != nil {
			return fmt.Errorf("records: read back %s: %w", part.table, err)
		}
		for j, i := range part.at {
			versions[i] = out[j]
		}
	}
	return nil
}
