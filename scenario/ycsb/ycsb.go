// Package ycsb is the "ycsb" scenario: the Yahoo! Cloud Serving Benchmark's
// core workloads A to F, with CoreWorkload's semantics and defaults (op
// mixes, request distributions, key names, field values, data integrity
// checks) so that results are comparable with YCSB's.
//
// Workloads (YCSB's workload files):
//
//	a  read 0.5, update 0.5                 zipfian
//	b  read 0.95, update 0.05               zipfian
//	c  read 1                               zipfian
//	d  read 0.95, insert 0.05               latest
//	e  scan 0.95, insert 0.05               zipfian, max scan length 100
//	f  read 0.5, read-modify-write 0.5      zipfian
//
// Records live in any engine with the engine.Records capability: the
// scenario has no storage code of its own.
package ycsb

import (
	"github.com/scalelab/scalelab/scenario/kit"
	"github.com/scalelab/scalelab/segment"

	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/scalelab/scalelab/cache"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
)

// Name is the scenario's registry name.
const Name = "ycsb"

// Operation indexes, in the order Workload.Operations returns their names.
const (
	OpRead = iota
	OpUpdate
	OpInsert
	OpScan
	OpReadModifyWrite
	numOps
)

// operationNames are YCSB's operation names, indexed by the Op constants.
var operationNames = []string{"read", "update", "insert", "scan", "read_modify_write"}

// Setting keys.
const (
	KeyWorkload        = "ycsb.workload"
	KeyRecords         = "ycsb.records"
	KeyOperationCount  = "ycsb.operation_count"
	KeyFields          = "ycsb.fields"
	KeyFieldLength     = "ycsb.field_length"
	KeyDistribution    = "ycsb.distribution"
	KeyZipfianConstant = "ycsb.zipfian_constant"
	KeyHotspotData     = "ycsb.hotspot_data_fraction"
	KeyHotspotOps      = "ycsb.hotspot_ops_fraction"
	KeyMaxScanLength   = "ycsb.max_scan_length"
	KeyScanLengthDist  = "ycsb.scan_length_distribution"
	KeyReadAllFields   = "ycsb.read_all_fields"
	KeyWriteAllFields  = "ycsb.write_all_fields"
	KeyInsertOrder     = "ycsb.insert_order"
	KeyVerify          = "ycsb.verify"
	KeyLoad            = "ycsb.load"
	KeySessionOps      = "ycsb.session_ops"
)

func init() { scenario.Register(&Scenario{}) }

// Scenario is the ycsb scenario. Its zero value is ready to use.
type Scenario struct{}

var _ scenario.Scenario = (*Scenario)(nil)

// Name returns "ycsb".
func (*Scenario) Name() string { return Name }

// Operations names the operations its workloads run (scenario.Operator).
func (*Scenario) Operations() []string { return slices.Clone(operationNames) }

// Description is one line for `scalelab list`.
func (*Scenario) Description() string {
	return "YCSB core workloads a-f (read/update/insert/scan/read-modify-write on usertable)"
}

// Settings declares the scenario's settings (YCSB property names in the
// descriptions), and the cache settings it honours (cache.go).
func (*Scenario) Settings() []setting.Spec {
	return append([]setting.Spec{
		{Key: KeyWorkload, Kind: setting.Enum, Default: "a", Allowed: []string{"a", "b", "c", "d", "e", "f"},
			Description: "core workload: a update-heavy, b read-mostly, c read-only, d read-latest, e short ranges, f read-modify-write"},
		{Key: KeyRecords, Kind: setting.Int, Default: "1000", Min: 1, Max: 1e12,
			Description: "records loaded and chosen from (recordcount)"},
		{Key: KeyOperationCount, Kind: setting.Int, Default: "1000", Min: 0, Max: 1e15,
			Description: "expected operations in a run (operationcount); only sizes the zipfian key space of workloads that insert: records + 2 x operation_count x insert proportion"},
		{Key: KeyFields, Kind: setting.Int, Default: "10", Min: 1, Max: 1000,
			Description: "fields per record (fieldcount)"},
		{Key: KeyFieldLength, Kind: setting.Int, Default: "100", Min: 1, Max: 1 << 20,
			Description: "bytes per field value (fieldlength, constant)"},
		{Key: KeyDistribution, Kind: setting.Enum, Default: "default", Allowed: []string{"default", "uniform", "zipfian", "latest", "hotspot"},
			Description: "request distribution (requestdistribution); default is the workload's own: latest for d, zipfian for the others"},
		{Key: KeyZipfianConstant, Kind: setting.Float, Default: "0.99", Check: kit.Between(0, 1),
			Description: "skew of the zipfian and latest distributions (zipfianconstant), in (0, 1)"},
		{Key: KeyHotspotData, Kind: setting.Float, Default: "0.2", Min: 0, Max: 1,
			Description: "fraction of records in the hot set (hotspotdatafraction)"},
		{Key: KeyHotspotOps, Kind: setting.Float, Default: "0.8", Min: 0, Max: 1,
			Description: "fraction of operations on the hot set (hotspotopnfraction)"},
		{Key: KeyMaxScanLength, Kind: setting.Int, Default: "1000", Min: 1, Max: 1e6,
			Description: "longest scan in records (maxscanlength); workload e uses 100 unless this is set"},
		{Key: KeyScanLengthDist, Kind: setting.Enum, Default: "uniform", Allowed: []string{"uniform", "zipfian"},
			Description: "distribution of scan lengths in [1, max_scan_length] (scanlengthdistribution)"},
		{Key: KeyReadAllFields, Kind: setting.Bool, Default: "true",
			Description: "reads and scans return every field, else one random field (readallfields)"},
		{Key: KeyWriteAllFields, Kind: setting.Bool, Default: "false",
			Description: "updates write every field, else one random field (writeallfields)"},
		{Key: KeyInsertOrder, Kind: setting.Enum, Default: "hashed", Allowed: []string{"hashed", "ordered"},
			Description: "key names: user + FNV hash of the key number (hashed), or user + 10-digit key number (ordered) (insertorder)"},
		{Key: KeyVerify, Kind: setting.Bool, Default: "false",
			Description: "write values derived from key and field and check every value read (dataintegrity); a mismatch is an integrity error"},
		{Key: KeyLoad, Kind: setting.Bool, Default: "true",
			Description: "load the records before the run (recreating the table); false runs against data already loaded"},
		kit.SessionOpsSpec(KeySessionOps),
	}, cache.DirectSpecs()...)
}

// Engines lists the engines with the engine.Records capability, sorted.
func (*Scenario) Engines() []string { return scenario.RecordEngines() }

// errVerifyNothing is returned by Open for ycsb.verify=true on an engine
// that stores nothing (null).
var errVerifyNothing = errors.New("ycsb.verify=true needs an engine that stores data; this one stores nothing (use memory or sqlite)")

// workloadDef is a YCSB workload file: op proportions and the properties it
// sets.
type workloadDef struct {
	props   [numOps]float64
	dist    string
	maxScan int
}

var workloads = map[string]workloadDef{
	"a": {props: [numOps]float64{OpRead: 0.5, OpUpdate: 0.5}, dist: "zipfian", maxScan: 1000},
	"b": {props: [numOps]float64{OpRead: 0.95, OpUpdate: 0.05}, dist: "zipfian", maxScan: 1000},
	"c": {props: [numOps]float64{OpRead: 1}, dist: "zipfian", maxScan: 1000},
	"d": {props: [numOps]float64{OpRead: 0.95, OpInsert: 0.05}, dist: "latest", maxScan: 1000},
	"e": {props: [numOps]float64{OpScan: 0.95, OpInsert: 0.05}, dist: "zipfian", maxScan: 100},
	"f": {props: [numOps]float64{OpRead: 0.5, OpReadModifyWrite: 0.5}, dist: "zipfian", maxScan: 1000},
}

// config is the resolved scenario configuration.
type config struct {
	workload    string
	props       [numOps]float64
	records     uint64
	opCount     uint64
	fields      int
	fieldLength int
	dist        string // uniform|zipfian|latest|hotspot
	theta       float64
	hotData     float64
	hotOps      float64
	maxScan     int
	scanDist    string
	readAll     bool
	writeAll    bool
	ordered     bool
	verify      bool
	load        bool
	sessionOps  uint64
}

// configFrom reads the scenario settings, resolving the workload defaults.
func configFrom(set *setting.Set) (*config, error) {
	if err := kit.RequireSettings(Name, set, (&Scenario{}).Settings()); err != nil {
		return nil, err
	}
	c := &config{
		workload:    set.Get(KeyWorkload).String(),
		records:     uint64(set.Get(KeyRecords).Int()),
		opCount:     uint64(set.Get(KeyOperationCount).Int()),
		fields:      int(set.Get(KeyFields).Int()),
		fieldLength: int(set.Get(KeyFieldLength).Int()),
		dist:        set.Get(KeyDistribution).String(),
		theta:       set.Get(KeyZipfianConstant).Float(),
		hotData:     set.Get(KeyHotspotData).Float(),
		hotOps:      set.Get(KeyHotspotOps).Float(),
		maxScan:     int(set.Get(KeyMaxScanLength).Int()),
		scanDist:    set.Get(KeyScanLengthDist).String(),
		readAll:     set.Get(KeyReadAllFields).Bool(),
		writeAll:    set.Get(KeyWriteAllFields).Bool(),
		ordered:     set.Get(KeyInsertOrder).String() == "ordered",
		verify:      set.Get(KeyVerify).Bool(),
		load:        set.Get(KeyLoad).Bool(),
		sessionOps:  uint64(set.Get(KeySessionOps).Int()),
	}
	def, ok := workloads[c.workload]
	if !ok {
		return nil, fmt.Errorf("ycsb: unknown workload %q", c.workload)
	}
	c.props = def.props
	if c.dist == "default" {
		c.dist = def.dist
	}
	if !set.Given(KeyMaxScanLength) {
		c.maxScan = def.maxScan
	}
	return c, nil
}

// Open resolves the settings, opens the engine's storage (creating the
// table; dropping it first when ycsb.load is true) and prepares the shared
// generators.
func (s *Scenario) Open(ctx context.Context, env scenario.Env) (scenario.Workload, error) {
	cfg, err := configFrom(env.Settings)
	if err != nil {
		return nil, err
	}
	spec := engine.CollectionSpec{Name: "usertable", Fields: fieldNames(cfg.fields), Recreate: cfg.load}
	if cfg.load {
		spec.Records = int64(cfg.records)
	}
	st, err := scenario.OpenCollection(ctx, Name, env, spec)
	if err != nil {
		return nil, err
	}
	if cfg.props[OpScan] > 0 && st.Traits().NoScans {
		st.Close()
		return nil, fmt.Errorf("ycsb workload %s scans, and %s cannot (it reads and writes by key only): %w; use workload a, b, c, d or f, or an engine that scans", cfg.workload, env.Engine, scenario.ErrEngineNotSupported)
	}
	if cfg.verify && errors.Is(st.ReadBack(ctx, nil, engine.AllFields, new(engine.Rows)), errors.ErrUnsupported) {
		st.Close()
		return nil, fmt.Errorf("ycsb on %s: %w", env.Engine, errVerifyNothing)
	}
	w := newWorkload(cfg, st, env.Seed)
	w.seg = env.Segment
	if w.cache, err = openCache(ctx, env, cfg); err != nil {
		st.Close()
		return nil, err
	}
	w.StoreBound = kit.InProcessBound(env, w.cache != nil)
	return w, nil
}

// Workload is an opened ycsb workload.
type Workload struct {
	cfg        *config
	st         engine.Collection
	seed       uint64
	fieldNames []string
	ops        kit.Chooser
	ctr        *kit.AckCounter
	seg        segment.Segment     // this process's share of a divided test: its inserts' key range
	cache      *kit.VersionedCache // the cache in front of the store (cache.go); nil without one
	// StoreBound holds the operations to an embedded store's statements
	// (scenario.Limited): each holds one connection at a time
	kit.StoreBound

	// Shared, read-only after Open except the counter and the zeta cache.
	keyUniform   uniform
	keyScrambled *scrambledZipfian
	keyHotspot   hotspot
	latestZeta   *zetaCache
	scanUniform  uniform
	scanZipf     kit.Zipfian
}

var (
	_ scenario.Workload = (*Workload)(nil)
	_ scenario.Limited  = (*Workload)(nil)
)

func newWorkload(cfg *config, st engine.Collection, seed uint64) *Workload {
	w := &Workload{cfg: cfg, st: st, seed: seed, ops: kit.NewChooser(cfg.props[:])}
	w.fieldNames = fieldNames(cfg.fields)
	w.ctr = kit.NewAckCounter(cfg.records)
	w.keyUniform = uniform{lo: 0, n: cfg.records}
	w.keyHotspot = newHotspot(0, cfg.records, cfg.hotData, cfg.hotOps)
	switch cfg.dist {
	case "zipfian":
		// As YCSB does, size the key space for the inserts expected in the
		// run so that popular keys do not move as the table grows; draws
		// beyond the keys inserted so far are redrawn.
		expected := uint64(float64(cfg.opCount) * cfg.props[OpInsert] * 2)
		w.keyScrambled = newScrambledZipfian(0, cfg.records+expected+1, cfg.theta)
	case "latest":
		w.latestZeta = &zetaCache{theta: cfg.theta}
		w.latestZeta.get(w.ctr.Last())
	}
	w.scanUniform = uniform{lo: 1, n: uint64(cfg.maxScan)}
	w.scanZipf = kit.NewZipfian(uint64(cfg.maxScan), cfg.theta, kit.Zeta(uint64(cfg.maxScan), cfg.theta))
	return w
}

// fieldNames returns YCSB's field names field0, field1...
func fieldNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = "field" + strconv.Itoa(i)
	}
	return names
}

// Operations returns read, update, insert, scan, read_modify_write.
func (w *Workload) Operations() []string { return slices.Clone(operationNames) }

// LoadSize is ycsb.records when ycsb.load is true, else 0.
func (w *Workload) LoadSize() int64 {
	if !w.cfg.load {
		return 0
	}
	return int64(w.cfg.records)
}

// Close releases the storage's prepared statements.
func (w *Workload) Close() error { return w.st.Close() }

// loadBatchSize is how many records Load hands the store at once (one
// transaction of multi-row inserts on SQL engines).
const loadBatchSize = 5000

// Load inserts key numbers [0, records) split into contiguous ranges, one
// per worker, in batches. Values derive from the seed and the key number
// (and with ycsb.verify, from the key and field name only), so the data does
// not depend on the number of workers. progress is called from one
// goroutine at a time.
func (w *Workload) Load(ctx context.Context, workers int, progress func(n int64)) error {
	if !w.cfg.load || w.cfg.records == 0 {
		return nil
	}
	err := scenario.LoadRanges(ctx, int64(w.cfg.records), workers, loadBatchSize, progress, func() func(context.Context, int64, int64) error {
		b := engine.NewBatch(w.cfg.fields, loadBatchSize)
		return func(ctx context.Context, lo, hi int64) error {
			b.Reset()
			for k := lo; k < hi; k++ {
				w.addRecord(b, uint64(k))
			}
			return w.st.InsertBatch(ctx, b)
		}
	})
	if err != nil {
		return fmt.Errorf("ycsb load: %w", err)
	}
	return nil
}

// addRecord appends record k, with all its fields, to b.
func (w *Workload) addRecord(b *engine.Batch, k uint64) {
	row := b.N
	b.N++
	b.Keys[row] = appendKey(b.Keys[row][:0], k, w.cfg.ordered)
	r := kit.NewRNG(w.seed ^ kit.Mix64(k))
	for f := range w.cfg.fields {
		v := &b.Vals[row*b.NF+f]
		if w.cfg.verify {
			*v = appendDeterministicValue((*v)[:0], b.Keys[row], w.fieldNames[f], w.cfg.fieldLength)
		} else {
			*v = appendRandomValue((*v)[:0], &r, w.cfg.fieldLength)
		}
	}
}
