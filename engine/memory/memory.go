// Package memory is the "memory" engine: an in-process key-value store of
// records (field name to bytes) with an ordered scan, whose settings inject
// faults (errors, latency, silently dropped writes). It exists to test
// scalelab itself: the load models, the metrics and the scenarios'
// correctness checks can be exercised without a server.
package memory

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/lru"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/setting"
)

// Name is the engine's registry name.
const Name = "memory"

// Setting keys of the memory engine.
const (
	KeyErrorRate     = "memory.error_rate"
	KeyErrorClass    = "memory.error_class"
	KeyLatency       = "memory.latency"
	KeyLatencyJitter = "memory.latency_jitter"
	KeyDropWrites    = "memory.drop_writes"
	KeyErrorMessage  = "memory.error_message"
	KeyDropAcked     = "memory.drop_acked"
)

func init() { engine.Register(&Engine{}) }

// Engine is the memory engine. Its zero value is ready to use.
type Engine struct{}

// Name returns "memory".
func (*Engine) Name() string { return Name }

// ProcessLocal is true: the store lives in the process that opened it.
func (*Engine) ProcessLocal(string) bool { return true }

// Embedded reports that the store runs inside scalelab.
func (*Engine) Embedded() bool { return true }

// Description is one line for `scalelab list`.
func (*Engine) Description() string {
	return "in-process key-value store with fault injection, for testing scalelab itself"
}

// errorClasses maps the memory.error_class values to metrics classes.
var errorClasses = map[string]metrics.Class{
	"timeout":  metrics.Timeout,
	"refused":  metrics.Refused,
	"rejected": metrics.Rejected,
	"other":    metrics.Other,
}

// Settings declares the fault-injection settings.
func (*Engine) Settings() []setting.Spec {
	return []setting.Spec{
		{Key: KeyErrorRate, Kind: setting.Float, Default: "0", Min: 0, Max: 1,
			Description: "fraction of operations that fail with an injected error of class memory.error_class"},
		{Key: KeyErrorClass, Kind: setting.Enum, Default: "other", Allowed: []string{"timeout", "refused", "rejected", "other"},
			Description: "outcome class of the injected errors"},
		{Key: KeyLatency, Kind: setting.Duration, Default: "0s", Min: 0, Max: 3600,
			Description: "latency added to every operation"},
		{Key: KeyLatencyJitter, Kind: setting.Duration, Default: "0s", Min: 0, Max: 3600,
			Description: "extra latency drawn uniformly from [0, jitter] per operation"},
		{Key: KeyDropWrites, Kind: setting.Float, Default: "0", Min: 0, Max: 1,
			Description: "fraction of acknowledged writes silently dropped (the write returns no error but stores nothing)"},
		{Key: KeyErrorMessage, Kind: setting.String, Default: "",
			Description: "text of the injected errors, also reported as the server's error_message (to test how reports show a store's messages)"},
		{Key: KeyDropAcked, Kind: setting.String, Default: "0", Check: checkDropAcked,
			Description: "K/N: of every N inserts and puts, acknowledge K but do not store them, deterministically (1/1000 drops writes number 1000, 2000, ...); 0 drops none; to test the acknowledged-write audit"},
	}
}

// Open returns a new, empty store configured from cfg.Settings (defaults for
// keys the set does not declare). Each Open makes a separate store.
func (e *Engine) Open(ctx context.Context, cfg engine.Config) (engine.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	get := setting.Getter(cfg.Settings, e.Settings())
	f := Faults{
		ErrorRate:     get(KeyErrorRate).Float(),
		ErrorClass:    errorClasses[get(KeyErrorClass).String()],
		Latency:       get(KeyLatency).Duration(),
		LatencyJitter: get(KeyLatencyJitter).Duration(),
		DropWrites:    get(KeyDropWrites).Float(),
		ErrorMessage:  get(KeyErrorMessage).String(),
	}
	f.DropAckedK, f.DropAckedN, _ = ParseDropAcked(get(KeyDropAcked).String())
	return New(f), nil
}

// Faults configures the faults a store injects. The zero value injects none.
type Faults struct {
	ErrorRate     float64       // fraction of operations failing with ErrInjected
	ErrorClass    metrics.Class // class of injected errors; OK means metrics.Other
	Latency       time.Duration // added to every operation
	LatencyJitter time.Duration // uniform extra latency in [0, LatencyJitter]
	DropWrites    float64       // fraction of writes acknowledged but not stored
	ErrorMessage  string        // text of injected errors (after ErrInjected's)
	// DropAckedK of every DropAckedN inserts and puts are acknowledged but
	// not stored, deterministically: write number i (from 1) is dropped
	// when floor(i*K/N) > floor((i-1)*K/N). DropAckedN 0 drops none.
	DropAckedK, DropAckedN int64
}

// ErrInjected is wrapped by every error the store injects on purpose.
var ErrInjected = errors.New("memory: injected fault")

// ErrExists is returned (classed metrics.Other) by Insert when the key is
// already stored.
var ErrExists = metrics.WithClass(metrics.Other, errors.New("memory: key exists"))

// Record is a stored value: field name to bytes. Records handed out by Get,
// View and Scan share their byte slices with the store and must not be
// modified; the store copies what it is given on every write.
type Record map[string][]byte

const numShards = 64

// Conn is an open memory store, safe for concurrent use. Every data method
// (not Len, Clear or Faults) first applies the injected latency and errors.
type Conn struct {
	faults   Faults
	injected error // the classed error returned for injected failures
	seed     maphash.Seed
	shards   [numShards]shard
	writes   atomic.Int64 // inserts and puts, counted for DropAckedN
	dropped  atomic.Int64 // writes dropped by DropAcked

	kvMu sync.Mutex
	kvs  map[string]*lru.Cache // the key-value caches by namespace (kv.go)
}

type shard struct {
	mu sync.RWMutex
	m  map[string]Record
	// keys is sorted and may hold keys deleted since the last sort; pending
	// holds keys added since then, unsorted. Scan merges them lazily.
	keys    []string
	pending []string
	stale   int
	_       [32]byte // keep shards on separate cache lines
}

// New returns an empty store that injects f.
func New(f Faults) *Conn {
	class := f.ErrorClass
	if class == metrics.OK || class >= metrics.NumClasses {
		class = metrics.Other
	}
	f.ErrorClass = class
	c := &Conn{
		faults:   f,
		injected: metrics.WithClass(class, injectedError(f.ErrorMessage, class)),
		seed:     maphash.MakeSeed(),
	}
	for i := range c.shards {
		c.shards[i].m = map[string]Record{}
	}
	return c
}

func injectedError(msg string, class metrics.Class) error {
	if msg != "" {
		return fmt.Errorf("%w: %s (class %s)", ErrInjected, msg, class)
	}
	return fmt.Errorf("%w (class %s)", ErrInjected, class)
}

// Faults returns the faults the store injects.
func (c *Conn) Faults() Faults { return c.faults }

// Info describes the store; Extra lists the fault settings.
func (c *Conn) Info(context.Context) (engine.Info, error) {
	f := c.faults
	info := engine.Info{
		Engine:  Name,
		Version: "n/a",
		Target:  "in-process",
		Extra: map[string]string{
			"error_rate":     fmt.Sprint(f.ErrorRate),
			"error_class":    f.ErrorClass.String(),
			"latency":        f.Latency.String(),
			"latency_jitter": f.LatencyJitter.String(),
			"drop_writes":    fmt.Sprint(f.DropWrites),
			"drop_acked":     fmt.Sprintf("%d/%d", f.DropAckedK, f.DropAckedN),
		},
	}
	if f.ErrorMessage != "" {
		info.Extra["error_message"] = f.ErrorMessage
	}
	return info, nil
}

// Close does nothing; the data stays readable until the Conn is dropped.
func (c *Conn) Close() error { return nil }

func (c *Conn) shard(key string) *shard {
	return &c.shards[maphash.String(c.seed, key)%numShards]
}

// inject applies the configured latency, then fails with the injected
// error at the configured rate.
func (c *Conn) inject(ctx context.Context) error {
	f := &c.faults
	if d := f.Latency; d > 0 || f.LatencyJitter > 0 {
		if f.LatencyJitter > 0 {
			d += rand.N(f.LatencyJitter + 1)
		}
		if err := sleep(ctx, d); err != nil {
			return err
		}
	}
	if f.ErrorRate > 0 && rand.Float64() < f.ErrorRate {
		return c.injected
	}
	return nil
}

// dropWrite reports whether this write is to be silently dropped.
func (c *Conn) dropWrite() bool {
	return c.faults.DropWrites > 0 && rand.Float64() < c.faults.DropWrites
}

// dropAcked counts an insert or put that is about to be acknowledged and
// reports whether DropAcked drops it.
func (c *Conn) dropAcked() bool {
	k, n := c.faults.DropAckedK, c.faults.DropAckedN
	if n <= 0 || k <= 0 {
		return false
	}
	i := c.writes.Add(1)
	if i*k/n > (i-1)*k/n {
		c.dropped.Add(1)
		return true
	}
	return false
}

// DroppedAcked returns how many acknowledged writes DropAcked dropped.
func (c *Conn) DroppedAcked() int64 { return c.dropped.Load() }

// ParseDropAcked parses a memory.drop_acked value: "0", or "K/N" with
// 0 <= K <= N and N >= 1.
func ParseDropAcked(v string) (k, n int64, err error) {
	v = strings.TrimSpace(v)
	if v == "0" || v == "" {
		return 0, 0, nil
	}
	ks, ns, ok := strings.Cut(v, "/")
	if ok {
		k, err = strconv.ParseInt(strings.TrimSpace(ks), 10, 64)
		if err == nil {
			n, err = strconv.ParseInt(strings.TrimSpace(ns), 10, 64)
		}
	}
	if !ok || err != nil || n < 1 || k < 0 || k > n || n > 1<<31 {
		return 0, 0, fmt.Errorf("want 0 or K/N with 0 <= K <= N and 1 <= N <= 2^31, e.g. 1/1000 (got %q)", v)
	}
	return k, n, nil
}

func checkDropAcked(v setting.Value) error {
	_, _, err := ParseDropAcked(v.String())
	return err
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		// On a loaded machine both may be ready by the time this runs, and
		// the context's own timer may not have fired yet: an operation
		// that ends after its deadline has timed out.
		if err := ctx.Err(); err != nil {
			return err
		}
		if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
			<-ctx.Done() // due: its timer is about to fire, and then ctx.Err() says so everywhere
			return ctx.Err()
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// clone copies rec into one backing array the store owns.
func clone(rec Record) Record {
	n := 0
	for _, v := range rec {
		n += len(v)
	}
	buf := make([]byte, 0, n)
	out := make(Record, len(rec))
	for k, v := range rec {
		start := len(buf)
		buf = append(buf, v...)
		out[k] = buf[start:len(buf):len(buf)]
	}
	return out
}

// Put stores rec under key, replacing any previous record.
func (c *Conn) Put(ctx context.Context, key string, rec Record) error {
	if err := c.inject(ctx); err != nil {
		return err
	}
	if c.dropWrite() || c.dropAcked() {
		return nil
	}
	rec = clone(rec)
	s := c.shard(key)
	s.mu.Lock()
	s.put(key, rec)
	s.mu.Unlock()
	return nil
}

// Insert stores rec under key; it fails with ErrExists if key is stored.
func (c *Conn) Insert(ctx context.Context, key string, rec Record) error {
	if err := c.inject(ctx); err != nil {
		return err
	}
	s := c.shard(key)
	s.mu.RLock()
	_, exists := s.m[key]
	s.mu.RUnlock()
	if exists {
		return fmt.Errorf("insert %q: %w", key, ErrExists)
	}
	if c.dropWrite() {
		return nil
	}
	rec = clone(rec)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, exists := s.m[key]; exists {
		return fmt.Errorf("insert %q: %w", key, ErrExists)
	}
	if c.dropAcked() {
		return nil
	}
	s.put(key, rec)
	return nil
}

func (s *shard) put(key string, rec Record) {
	if _, exists := s.m[key]; !exists {
		s.pending = append(s.pending, key)
	}
	s.m[key] = rec
}

// Update sets the fields of rec in the record stored under key, leaving its
// other fields alone; it fails with engine.ErrNotFound if key is not stored.
func (c *Conn) Update(ctx context.Context, key string, rec Record) error {
	if err := c.inject(ctx); err != nil {
		return err
	}
	s := c.shard(key)
	if c.dropWrite() {
		s.mu.RLock()
		_, ok := s.m[key]
		s.mu.RUnlock()
		if !ok {
			return fmt.Errorf("update %q: %w", key, engine.ErrNotFound)
		}
		return nil
	}
	rec = clone(rec)
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.m[key]
	if !ok {
		return fmt.Errorf("update %q: %w", key, engine.ErrNotFound)
	}
	for k, v := range rec {
		old[k] = v
	}
	return nil
}

// Delete removes key; it fails with engine.ErrNotFound if key is not stored.
// A dropped delete leaves the record in place.
func (c *Conn) Delete(ctx context.Context, key string) error {
	if err := c.inject(ctx); err != nil {
		return err
	}
	s := c.shard(key)
	drop := c.dropWrite()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[key]; !ok {
		return fmt.Errorf("delete %q: %w", key, engine.ErrNotFound)
	}
	if !drop {
		delete(s.m, key)
		s.stale++
	}
	return nil
}

// Get returns a copy of the record stored under key (its byte slices are
// shared and must not be modified), or engine.ErrNotFound.
func (c *Conn) Get(ctx context.Context, key string) (Record, error) {
	var out Record
	err := c.View(ctx, key, func(rec Record) error {
		out = make(Record, len(rec))
		for k, v := range rec {
			out[k] = v
		}
		return nil
	})
	return out, err
}

// View calls fn with the record stored under key while holding the record's
// shard read-locked, without copying; fn must not modify or retain rec, nor
// write to the store. View fails with engine.ErrNotFound if key is not
// stored and otherwise returns fn's error.
func (c *Conn) View(ctx context.Context, key string, fn func(rec Record) error) error {
	if err := c.inject(ctx); err != nil {
		return err
	}
	return c.Peek(key, fn)
}

// Peek is View without injected faults, latency or cancellation: the
// acknowledged-write audit reads values back with it.
func (c *Conn) Peek(key string, fn func(rec Record) error) error {
	s := c.shard(key)
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec, ok := s.m[key]
	if !ok {
		return fmt.Errorf("get %q: %w", key, engine.ErrNotFound)
	}
	return fn(rec)
}

// Len returns the number of stored records. It injects no faults.
func (c *Conn) Len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		n += len(s.m)
		s.mu.RUnlock()
	}
	return n
}

// Clear removes every record. It injects no faults.
func (c *Conn) Clear() {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		s.m = map[string]Record{}
		s.keys, s.pending, s.stale = nil, nil, 0
		s.mu.Unlock()
	}
}

// Scan calls fn, in ascending key order (bytewise), for up to n records whose
// keys are >= start (every such record when n <= 0). It stops at the first
// error fn returns and returns it. fn runs with the whole store read-locked:
// it must not modify or retain rec, nor write to the store. Records written
// while the scan starts may or may not be seen.
func (c *Conn) Scan(ctx context.Context, start string, n int, fn func(key string, rec Record) error) error {
	if err := c.inject(ctx); err != nil {
		return err
	}
	for i := range c.shards {
		c.shards[i].sortKeys()
	}
	for i := range c.shards {
		c.shards[i].mu.RLock()
	}
	defer func() {
		for i := range c.shards {
			c.shards[i].mu.RUnlock()
		}
	}()
	var h cursorHeap
	for i := range c.shards {
		s := &c.shards[i]
		pos, _ := slices.BinarySearch(s.keys, start)
		h.push(cursor{s: s, pos: pos})
	}
	seen := 0
	for h.len() > 0 && (n <= 0 || seen < n) {
		cur := h.top()
		s := cur.s
		key := s.keys[cur.pos]
		cur.pos++
		h.fix() // cur now points at the next smallest cursor
		rec, ok := s.m[key]
		if !ok { // deleted since the keys were sorted
			continue
		}
		if err := fn(key, rec); err != nil {
			return err
		}
		seen++
	}
	return nil
}

// sortKeys merges pending keys into the sorted keys and drops deleted ones.
func (s *shard) sortKeys() {
	s.mu.RLock()
	clean := len(s.pending) == 0 && s.stale == 0
	s.mu.RUnlock()
	if clean {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	slices.Sort(s.pending)
	merged := make([]string, 0, len(s.keys)+len(s.pending))
	a, b := s.keys, s.pending
	for len(a) > 0 || len(b) > 0 {
		var k string
		switch {
		case len(b) == 0 || (len(a) > 0 && a[0] <= b[0]):
			k, a = a[0], a[1:]
		default:
			k, b = b[0], b[1:]
		}
		if n := len(merged); n > 0 && merged[n-1] == k {
			continue // deleted and inserted again
		}
		if s.stale > 0 {
			if _, ok := s.m[k]; !ok {
				continue
			}
		}
		merged = append(merged, k)
	}
	s.keys, s.pending, s.stale = merged, s.pending[:0], 0
}

// cursor is a position in one shard's sorted keys.
type cursor struct {
	s   *shard
	pos int
}

func (c cursor) done() bool { return c.pos >= len(c.s.keys) }

func (c cursor) less(d cursor) bool { return strings.Compare(c.s.keys[c.pos], d.s.keys[d.pos]) < 0 }

// cursorHeap is a min-heap of unfinished cursors by current key.
type cursorHeap struct{ c []cursor }

func (h *cursorHeap) len() int { return len(h.c) }

func (h *cursorHeap) top() *cursor { return &h.c[0] }

func (h *cursorHeap) push(c cursor) {
	if c.done() {
		return
	}
	h.c = append(h.c, c)
	i := len(h.c) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.c[i].less(h.c[p]) {
			break
		}
		h.c[i], h.c[p] = h.c[p], h.c[i]
		i = p
	}
}

// fix restores the heap after the top cursor advanced, removing it if done.
func (h *cursorHeap) fix() {
	if h.c[0].done() {
		last := len(h.c) - 1
		h.c[0] = h.c[last]
		h.c = h.c[:last]
		if last == 0 {
			return
		}
	}
	i, n := 0, len(h.c)
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h.c[l].less(h.c[m]) {
			m = l
		}
		if r < n && h.c[r].less(h.c[m]) {
			m = r
		}
		if m == i {
			return
		}
		h.c[i], h.c[m] = h.c[m], h.c[i]
		i = m
	}
}

// Has reports whether key is stored. It injects no faults: the
// acknowledged-write audit reads back with it.
func (c *Conn) Has(key string) bool {
	s := c.shard(key)
	s.mu.RLock()
	_, ok := s.m[key]
	s.mu.RUnlock()
	return ok
}
