package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/scalelab/scalelab/metrics"
)

// Records is an optional capability of a Conn: the store keeps collections
// of records, each a key and a fixed list of named fields whose values are
// bytes (a table's columns, a document's fields). Key/document scenarios
// (ycsb, social) use it and need no storage file per engine; an engine
// implements it once, in its own package.
type Records interface {
	// Collection makes the collection of spec (dropping what a collection
	// of that name holds when spec.Recreate) and returns it.
	Collection(ctx context.Context, spec CollectionSpec) (Collection, error)
}

// CollectionSpec describes a collection of records.
type CollectionSpec struct {
	// Name names the collection (a table, an index, a collection). It is a
	// lower-case identifier; engines may prefix it (an index prefix).
	Name string
	// Fields are the field names, lower-case identifiers; a field's index
	// in this slice is its number in every method of Collection.
	Fields []string
	// Recreate drops the collection's data first (a load follows).
	Recreate bool
	// Records is how many records the load will write (0: unknown); an
	// engine may use it to finish the load once they are all written.
	Records int64
}

// AllFields, as a field number, selects every field.
const AllFields = -1

// Collection is an open collection of records. Methods are safe for
// concurrent use; the byte slices they are given are valid only during
// the call, and the bytes they put into a Rows are copies. A field number
// selects one field, or every field when it is AllFields. Errors are the
// engine's own (the runner classifies them through the Conn's Classifier);
// a missing record is ErrNotFound.
type Collection interface {
	// Get adds key's record to rows (one row), or fails wrapping
	// ErrNotFound.
	Get(ctx context.Context, key []byte, field int, rows *Rows) error
	// Scan adds up to n records with keys >= start to rows, in key order
	// (in the store's own order when Traits().KeyOrderedScans is false).
	Scan(ctx context.Context, start []byte, n, field int, rows *Rows) error
	// Insert writes a new record with every field of vals.
	Insert(ctx context.Context, key []byte, vals [][]byte) error
	// Update writes vals[f] for every f of fields (every field when fields
	// is nil) into key's record, or fails wrapping ErrNotFound (where
	// Traits().TellsMissing).
	Update(ctx context.Context, key []byte, fields []int, vals [][]byte) error
	// Delete removes key's record, or fails wrapping ErrNotFound (where
	// Traits().TellsMissing).
	Delete(ctx context.Context, key []byte) error
	// InsertBatch writes the records of a load batch.
	InsertBatch(ctx context.Context, b *Batch) error
	// AfterLoad runs once the load has written every record (an index
	// refreshes, for example), so that scans and counts see them all.
	AfterLoad(ctx context.Context) error
	// Count returns the number of records stored, every acknowledged
	// write included.
	Count(ctx context.Context) (int64, error)
	// MaxKey returns the highest key stored (nil when there is none).
	MaxKey(ctx context.Context) ([]byte, error)
	// ReadBack adds to rows the records of keys that the store holds (the
	// others are left out), read where every acknowledged write is seen
	// (the primary where there are replicas) and without injected faults:
	// the acknowledged-write audit's read-back.
	ReadBack(ctx context.Context, keys [][]byte, field int, rows *Rows) error
	// Traits tells what the collection guarantees.
	Traits() Traits
	// Close releases what the collection holds (not the connection).
	Close() error
}

// Traits are what a Collection guarantees, for the checks scenarios make.
type Traits struct {
	// ReadsOwnWrites: a Get after an acknowledged write sees it (false, for
	// example, for Cassandra at consistency levels with R + W <= RF).
	ReadsOwnWrites bool
	// KeyOrderedScans: Scan returns records in key order.
	KeyOrderedScans bool
	// TellsMissing: Update and Delete of a missing key fail with
	// ErrNotFound (false where writes are upserts).
	TellsMissing bool
	// ScansLag: Scan and Count see writes only after a refresh (a search
	// index); Get is real time.
	ScansLag bool
	// NoScans: the store reads and writes by key only (memcached cannot
	// list its keys): Scan, Count and MaxKey fail wrapping
	// errors.ErrUnsupported, and a scenario that needs them refuses the
	// engine when it opens, before any load.
	NoScans bool
}

// Rows is a reusable buffer of records that Get, Scan and ReadBack fill.
type Rows struct {
	nf      int
	n       int
	keys    [][]byte
	vals    [][]byte // row-major: vals[row*nf+field]
	present []bool
}

// Reset empties rows for records of nf fields, keeping its buffers.
func (r *Rows) Reset(nf int) { r.nf, r.n = nf, 0 }

// Len is the number of rows.
func (r *Rows) Len() int { return r.n }

// Fields is the number of fields of a row.
func (r *Rows) Fields() int { return r.nf }

// Key returns row i's key.
func (r *Rows) Key(i int) []byte { return r.keys[i] }

// Value returns field f of row i and whether the store returned it.
func (r *Rows) Value(i, f int) ([]byte, bool) {
	j := i*r.nf + f
	return r.vals[j], r.present[j]
}

// Add appends a row for key (copied) with no field set and returns its
// index.
func (r *Rows) Add(key []byte) int {
	i := r.grow()
	r.keys[i] = append(r.keys[i][:0], key...)
	return i
}

// AddString is Add for a key given as a string.
func (r *Rows) AddString(key string) int {
	i := r.grow()
	r.keys[i] = append(r.keys[i][:0], key...)
	return i
}

// Set copies v as field f of row i.
func (r *Rows) Set(i, f int, v []byte) {
	j := i*r.nf + f
	r.vals[j] = append(r.vals[j][:0], v...)
	r.present[j] = true
}

// Strings returns keys as strings, in order.
func Strings(keys [][]byte) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = string(k)
	}
	return out
}

// AddValues appends a row for key (Add) holding vals: the record's fields
// in order, or with field >= 0 (a read of one field) that field's value;
// a nil value leaves its field unset. It returns the row's index.
func (r *Rows) AddValues(key []byte, field int, vals [][]byte) int {
	i := r.Add(key)
	for f, v := range vals {
		if field >= 0 {
			f = field
		}
		if v != nil {
			r.Set(i, f, v)
		}
	}
	return i
}

// SetString is Set for a value given as a string.
func (r *Rows) SetString(i, f int, v string) {
	j := i*r.nf + f
	r.vals[j] = append(r.vals[j][:0], v...)
	r.present[j] = true
}

func (r *Rows) grow() int {
	i := r.n
	r.n++
	if len(r.keys) < r.n {
		r.keys = append(r.keys, nil)
	}
	if want := r.n * r.nf; len(r.vals) < want {
		r.vals = append(r.vals, make([][]byte, want-len(r.vals))...)
		r.present = append(r.present, make([]bool, want-len(r.present))...)
	}
	clear(r.present[i*r.nf : (i+1)*r.nf])
	return i
}

// Batch is a reusable set of records for InsertBatch.
type Batch struct {
	N    int      // records in the batch
	NF   int      // fields per record
	Keys [][]byte // Keys[i] is record i's key
	Vals [][]byte // row-major: Vals[i*NF+f]
}

// NewBatch returns a batch with room for size records of nf fields.
func NewBatch(nf, size int) *Batch {
	return &Batch{NF: nf, Keys: make([][]byte, size), Vals: make([][]byte, size*nf)}
}

// Reset empties the batch, keeping its buffers.
func (b *Batch) Reset() { b.N = 0 }

// Row returns record i's field values.
func (b *Batch) Row(i int) [][]byte { return b.Vals[i*b.NF : (i+1)*b.NF] }

// Classifier is an optional capability of a Conn: it gives the engine's
// own errors their outcome class (metrics.WithClass), once, where the
// runner gets the result of an operation, so that scenarios never classify
// driver errors. It returns err unchanged when err is not the engine's or
// already carries a class.
type Classifier interface {
	Classify(ctx context.Context, err error) error
}

// Ended reports whether ctx has ended and, if so, returns err joined with
// ctx's error (an error that already is ctx's stays as it is), so that an
// operation cut short by the run's end or Ctrl-C is classed by that; while
// ctx is live it returns err unchanged. Classifiers call it first.
func Ended(ctx context.Context, err error) (bool, error) {
	cerr := ctx.Err()
	if cerr == nil {
		return false, err
	}
	if errors.Is(err, cerr) {
		return true, err
	}
	return true, fmt.Errorf("%w: %w", cerr, err)
}

// ClassifyWith is the common course of an engine's classifier: nil stays
// nil, an error after ctx ended is joined with ctx's error (Ended), an
// error already classed keeps its class, and any other is classed by
// classOf.
func ClassifyWith(ctx context.Context, err error, classOf func(error) metrics.Class) error {
	if err == nil {
		return nil
	}
	if ended, e := Ended(ctx, err); ended {
		return e
	}
	var classed metrics.Classed
	if errors.As(err, &classed) {
		return err
	}
	return metrics.WithClass(classOf(err), err)
}

// RecordsEngine is an optional capability of an Engine whose connections
// implement Records, so that `scalelab list` and the scenarios that use
// records know it without connecting.
type RecordsEngine interface {
	HasRecords() bool
}

// WithRecords returns the names of the registered engines whose
// connections implement Records, sorted.
func WithRecords() []string { return namesWith(RecordsEngine.HasRecords) }

// namesWith returns the names of the registered engines that implement C
// and for which has is true, sorted.
func namesWith[C any](has func(C) bool) []string {
	var out []string
	for _, name := range Names() {
		e, _ := Lookup(name)
		if c, ok := e.(C); ok && has(c) {
			out = append(out, name)
		}
	}
	return out
}

// OpError marks the error of an operation that the engine named Engine
// sent, so that the engine's classifier tells it from the errors of the
// run's other engines (IsOpError).
type OpError struct {
	Engine string
	Err    error
}

func (e *OpError) Error() string { return e.Err.Error() }
func (e *OpError) Unwrap() error { return e.Err }

// WrapOp marks err as an operation error of engine name (nil stays nil).
func WrapOp(name string, err error) error {
	if err == nil {
		return nil
	}
	return &OpError{Engine: name, Err: err}
}

// IsOpError reports whether err is marked (WrapOp) as an operation error
// of engine name.
func IsOpError(err error, name string) bool {
	var op *OpError
	return errors.As(err, &op) && op.Engine == name
}
