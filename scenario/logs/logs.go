// Package logs is the "logs" scenario, after the study "When Logs Become
// Big Data": log records (timestamp, machine, service, severity, message)
// written one at a time or in bulk, read back by id, counted by timestamp,
// machine, service and severity, grouped per host and searched by word,
// with every answer checked against a ground truth known in advance
// (generate.go), and a freshness probe timing how long 10,000 new records
// take to become visible.
//
// The storage for each engine lives in its own file (sqlite.go,
// postgres.go) behind the store interface (store.go); conformance_test.go
// is the suite every storage file must pass.
package logs

import (
	"github.com/scalelab/scalelab/scenario/kit"
	"github.com/scalelab/scalelab/segment"

	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
)

// Name is the scenario's registry name.
const Name = "logs"

// Setting keys.
const (
	KeyRecords          = "logs.records"
	KeyLoad             = "logs.load"
	KeyIndexes          = "logs.indexes"
	KeyQueryTables      = "logs.query_tables"
	KeyMix              = "logs.mix"
	KeyBatchSize        = "logs.batch_size"
	KeyRange            = "logs.range"
	KeySessionOps       = "logs.session_ops"
	KeyFreshRecords     = "logs.freshness_records"
	KeyFreshRate        = "logs.freshness_rate"
	KeyFreshWriters     = "logs.freshness_writers"
	KeyFreshPoll        = "logs.freshness_poll"
	KeyFreshMaxPolls    = "logs.freshness_max_polls"
	DefaultMix          = "write:30,write_bulk:1,read:30,count_a:10,count_b:10,count_c:10,errors_per_host:4,search:4"
	defaultFreshRecords = 10000
)

func init() { scenario.Register(&Scenario{}) }

// Scenario is the logs scenario. Its zero value is ready to use.
type Scenario struct{}

var _ scenario.Scenario = (*Scenario)(nil)

// Name returns "logs".
func (*Scenario) Name() string { return Name }

// Operations names the operations its workloads run (scenario.Operator).
func (*Scenario) Operations() []string { return slices.Clone(operationNames[:]) }

// Description is one line for `scalelab list`.
func (*Scenario) Description() string {
	return "log analytics (the study \"When Logs Become Big Data\"): writes, reads by id, exact counts checked against a known ground truth, errors per host, word search, freshness probe"
}

// Settings declares the scenario's settings.
func (*Scenario) Settings() []setting.Spec {
	return []setting.Spec{
		{Key: KeyRecords, Kind: setting.Int, Default: "100000", Min: 0, Max: 1e10,
			Description: "records loaded before the run (the first " + strconv.Itoa(Distinct) + " are distinct combinations)"},
		{Key: KeyLoad, Kind: setting.Bool, Default: "true",
			Description: "recreate the table and load logs.records records; false runs on the records an earlier load left (a contiguous prefix of generated records)"},
		{Key: KeyIndexes, Kind: setting.Bool, Default: "true",
			Description: "secondary indexes: (timestamp, machine), (timestamp, service, severity) and the message's words where the engine can index them; off leaves only the primary key"},
		{Key: KeyQueryTables, Kind: setting.Bool, Default: "false",
			Description: "cassandra with logs.indexes=off: keep query tables by timestamp that answer the counts, written with each record in one logged batch; false is the study's bare table, whose counts are ALLOW FILTERING scans"},
		{Key: KeyMix, Kind: setting.String, Default: DefaultMix, Check: checkMix,
			Description: "operations and their weights: name:weight,... of write, write_bulk, read, count_a, count_b, count_c, errors_per_host, search, freshness"},
		{Key: KeyBatchSize, Kind: setting.Int, Default: "1000", Min: 1, Max: 1e6,
			Description: "records per logs.write_bulk"},
		{Key: KeyRange, Kind: setting.Int, Default: "10", Min: 1, Max: NumTimestamps,
			Description: "timestamps (a minute apart) spanned by an errors_per_host query"},
		kit.SessionOpsSpec(KeySessionOps),
		{Key: KeyFreshRecords, Kind: setting.Int, Default: strconv.Itoa(defaultFreshRecords), Min: 1, Max: 1e7,
			Description: "records a freshness probe writes, all with one new timestamp"},
		{Key: KeyFreshRate, Kind: setting.Float, Default: "2000", Min: 0, Max: 1e7,
			Description: "records per second a freshness probe writes (0: as fast as the writers go)"},
		{Key: KeyFreshWriters, Kind: setting.Int, Default: "8", Min: 1, Max: 1024,
			Description: "concurrent writers of a freshness probe (single-record writes, as the study's clients)"},
		{Key: KeyFreshPoll, Kind: setting.Duration, Default: "100ms", Min: 0.001, Max: 60,
			Description: "a freshness probe queries at once after the last acknowledged write, then this often"},
		{Key: KeyFreshMaxPolls, Kind: setting.Int, Default: "100", Min: 1, Max: 1e6,
			Description: "queries after which a probe whose records are still not all visible fails (class timeout)"},
	}
}

// parseMix parses name:weight,... into weights per operation.
func parseMix(s string) ([numOps]float64, error) {
	var w [numOps]float64
	total := 0.0
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, ws, ok := strings.Cut(part, ":")
		weight := 1.0
		if ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(ws), 64)
			if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
				return w, fmt.Errorf("%q: the weight must be a number >= 0", part)
			}
			weight = f
		}
		op, known := mixNames[strings.TrimSpace(name)]
		if !known {
			names := make([]string, 0, len(mixNames))
			for n := range mixNames {
				names = append(names, n)
			}
			sort.Strings(names)
			msg := fmt.Sprintf("unknown operation %q; allowed: %s", name, strings.Join(names, ", "))
			if n := setting.Nearest(name, names); n != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", n)
			}
			return w, errors.New(msg)
		}
		w[op] += weight
		total += weight
	}
	if total <= 0 {
		return w, errors.New("no operation with a positive weight, e.g. write:1,read:1")
	}
	return w, nil
}

func checkMix(v setting.Value) error {
	_, err := parseMix(v.String())
	return err
}

// config is the resolved scenario configuration.
type config struct {
	records      int64
	load         bool
	indexes      bool
	mix          [numOps]float64
	batch        int
	span         int
	sessionOps   uint64
	freshRecords int64
	freshRate    float64
	freshWriters int
	freshPoll    time.Duration
	freshMax     int
}

func configFrom(set *setting.Set) (*config, error) {
	if err := kit.RequireSettings(Name, set, (&Scenario{}).Settings()); err != nil {
		return nil, err
	}
	c := &config{
		records:      set.Get(KeyRecords).Int(),
		load:         set.Get(KeyLoad).Bool(),
		indexes:      set.Get(KeyIndexes).Bool(),
		batch:        int(set.Get(KeyBatchSize).Int()),
		span:         int(set.Get(KeyRange).Int()),
		sessionOps:   uint64(set.Get(KeySessionOps).Int()),
		freshRecords: set.Get(KeyFreshRecords).Int(),
		freshRate:    set.Get(KeyFreshRate).Float(),
		freshWriters: int(set.Get(KeyFreshWriters).Int()),
		freshPoll:    set.Get(KeyFreshPoll).Duration(),
		freshMax:     int(set.Get(KeyFreshMaxPolls).Int()),
	}
	mix, err := parseMix(set.Get(KeyMix).String())
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", setting.ErrBadValue, KeyMix, err)
	}
	c.mix = mix
	return c, nil
}

// Engines lists the engines with a storage file, sorted.
func (*Scenario) Engines() []string { return openers.Engines() }

// openers maps an engine name to its storage file's constructor (given
// whether to recreate the data); each storage file adds itself from init.
var openers = kit.Storage[bool, store]{}

// Open resolves the settings and opens the engine's storage: with
// logs.load it recreates the table (the indexes come after the load); else
// it checks that the table holds a contiguous prefix of generated records
// (which becomes the ground truth's starting point), removes earlier
// freshness probes and sets the indexes as logs.indexes says.
func (s *Scenario) Open(ctx context.Context, env scenario.Env) (scenario.Workload, error) {
	cfg, err := configFrom(env.Settings)
	if err == nil && env.Settings.Get(KeyQueryTables).Bool() && env.Engine != cassandraName {
		err = fmt.Errorf("%w: %s=true: query tables are the cassandra store's; the %s store answers counts from its table and indexes (logs.indexes)", setting.ErrBadValue, KeyQueryTables, env.Engine)
	}
	if err != nil {
		return nil, err
	}
	st, err := openers.Open(ctx, Name, env, cfg.load)
	if err != nil {
		return nil, err
	}
	w := &Workload{cfg: cfg, st: st, seed: env.Seed, ops: kit.NewChooser(cfg.mix[:]), seg: env.Segment}
	fail := func(err error) (scenario.Workload, error) {
		st.close()
		return nil, fmt.Errorf("logs on %s: %w", env.Engine, err)
	}
	base := int64(0)
	if env.ReadBackOnly {
		return w, nil // reading back ids needs none of the checks below
	}
	if cfg.load {
		base = cfg.records
		if base == 0 {
			if err := st.finishLoad(ctx, cfg.indexes); err != nil {
				return fail(err)
			}
		}
	} else {
		if err := st.deleteFresh(ctx); err != nil {
			return fail(err)
		}
		n, next, err := st.existing(ctx)
		if err != nil {
			return fail(err)
		}
		if n != next {
			if env.Segment.Split() {
				return fail(fmt.Errorf("the table holds %d records with ids up to %d: other segments of this test have written already; every segment must open before any starts its load (give them all one --start-at a little ahead), on data loaded once with %s=true", n, next-1, KeyLoad))
			}
			return fail(fmt.Errorf("the table holds %d records with ids up to %d: not the contiguous prefix of generated records the ground truth needs; load again with %s=true", n, next-1, KeyLoad))
		}
		base = n
		if err := st.finishLoad(ctx, cfg.indexes); err != nil {
			return fail(err)
		}
	}
	w.base = base
	// A segment of a divided test writes records from its own range of
	// ids (segment.Segment.Key): segment 0 right after the loaded ones.
	w.start = env.Segment.Key(base, 0)
	w.ids.init(w.start)
	return w, nil
}

// Workload is an opened logs workload.
type Workload struct {
	cfg  *config
	st   store
	seed uint64
	ops  kit.Chooser
	base int64 // records present before the run (loaded or found)
	// start is the first record id this process writes: base, or the
	// start of its segment's range in a divided test (seg).
	start int64
	seg   segment.Segment
	ids   idTracker
	// probes numbers freshness probes: probe k uses timestamp FreshBase+k.
	probes atomic.Int64
	fresh  freshStats
}

var (
	_ scenario.Workload = (*Workload)(nil)
	_ scenario.Reporter = (*Workload)(nil)
)

// Operations returns the operation names, logs.write first.
func (w *Workload) Operations() []string { return slices.Clone(operationNames[:]) }

// LoadSize is logs.records when logs.load is true, else 0.
func (w *Workload) LoadSize() int64 {
	if !w.cfg.load {
		return 0
	}
	return w.cfg.records
}

// Close releases the storage (not the engine connection).
func (w *Workload) Close() error { return w.st.close() }

// loadBatch is how many records Load hands the store at once.
const loadBatch = 5000

// Load writes records 0..logs.records-1 with bulk writes, split into
// contiguous ranges, one per worker; then the store builds the indexes
// (logs.indexes), updates its statistics and waits until every replica has
// the data.
func (w *Workload) Load(ctx context.Context, workers int, progress func(n int64)) error {
	n := w.LoadSize()
	if n == 0 {
		return nil
	}
	err := scenario.LoadRanges(ctx, n, workers, loadBatch, progress, func() func(context.Context, int64, int64) error {
		batch := make([]Record, 0, loadBatch)
		var buf []byte
		return func(ctx context.Context, lo, hi int64) error {
			batch = batch[:0]
			for k := lo; k < hi; k++ {
				batch = append(batch, Record{})
				buf = fill(&batch[len(batch)-1], k, buf)
			}
			return w.st.insertBatch(ctx, batch)
		}
	})
	if err != nil {
		return fmt.Errorf("logs load: %w", err)
	}
	if err := w.st.finishLoad(ctx, w.cfg.indexes); err != nil {
		return fmt.Errorf("logs load: %w", err)
	}
	return nil
}

// Report gives the freshness probes' figures (delay from the last
// acknowledged write until every record of the probe was visible, and the
// queries it took) and what the ground truth covered.
func (w *Workload) Report() map[string]any {
	out := map[string]any{
		"ground_truth": map[string]any{
			"records_before_run":  w.base,
			"records_written":     w.ids.issued.Load() - w.start,
			"acknowledged_prefix": w.ids.prefix.Load(),
			"failed_writes":       w.ids.failures.Load(),
			"distinct_records":    Distinct,
		},
	}
	if w.seg.Split() {
		gt := out["ground_truth"].(map[string]any)
		gt["first_id_written"] = w.start
		gt["counts_checked"] = "at least the records loaded and this segment's acknowledged ones (other segments' writes are unknown here)"
	}
	if f := w.fresh.report(w.cfg); f != nil {
		out["freshness"] = f
	}
	return out
}

// idTracker hands out record numbers to writes and tracks the longest
// prefix of records known to be stored (every write below it acknowledged):
// a count over that prefix is a lower bound of any correct answer, and a
// count over every number handed out an upper bound.
type idTracker struct {
	issued   atomic.Int64 // numbers handed out: records 0..issued-1 may exist
	prefix   atomic.Int64 // records 0..prefix-1 exist
	failures atomic.Int64
	mu       sync.Mutex
	pending  map[int64]int64 // acknowledged ranges start -> end beyond the prefix
	blocked  int64           // the first failed write: the prefix never passes it
}

func (t *idTracker) init(base int64) {
	t.issued.Store(base)
	t.prefix.Store(base)
	t.pending = map[int64]int64{}
	t.blocked = math.MaxInt64
}

// take hands out n consecutive record numbers and returns the first.
func (t *idTracker) take(n int64) int64 { return t.issued.Add(n) - n }

// done records that records start..start+n-1 were acknowledged.
func (t *idTracker) done(start, n int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if start >= t.blocked {
		return // the prefix can never reach it
	}
	if start != t.prefix.Load() {
		t.pending[start] = start + n
		return
	}
	end := start + n
	for {
		next, ok := t.pending[end]
		if !ok {
			break
		}
		delete(t.pending, end)
		end = next
	}
	t.prefix.Store(end)
}

// failed records that the write of start.. was not acknowledged: it may or
// may not be stored, so the prefix stops there.
func (t *idTracker) failed(start int64) {
	t.failures.Add(1)
	t.mu.Lock()
	defer t.mu.Unlock()
	if start < t.blocked {
		t.blocked = start
		for s := range t.pending {
			if s > start {
				delete(t.pending, s)
			}
		}
	}
}
