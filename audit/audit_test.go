package audit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		err   error
		n     int
		want  Outcome
		class metrics.Class
	}{
		{"ok", nil, 1, OK, metrics.OK},
		{"ok bulk", nil, 100, OK, metrics.OK},
		{"rejected single", metrics.WithClass(metrics.Rejected, errors.New("busy")), 1, Failed, metrics.Rejected},
		{"not found single", metrics.WithClass(metrics.NotFound, errors.New("no index")), 1, Failed, metrics.NotFound},
		{"rejected bulk: partly applied", metrics.WithClass(metrics.Rejected, errors.New("429 on 3 of 100")), 100, Unknown, metrics.Rejected},
		{"timeout", fmt.Errorf("insert: %w", context.DeadlineExceeded), 1, Unknown, metrics.Timeout},
		{"cancelled at the drain", context.Canceled, 1, Unknown, metrics.Other},
		{"connection reset", fmt.Errorf("write: %w", syscall.ECONNRESET), 1, Unknown, metrics.Refused},
		{"connection refused", syscall.ECONNREFUSED, 1, Unknown, metrics.Refused},
		{"other (constraint, unknown)", errors.New("boom"), 1, Unknown, metrics.Other},
		{"integrity", metrics.WithClass(metrics.Integrity, errors.New("bad")), 1, Unknown, metrics.Integrity},
	}
	for _, c := range cases {
		out, class := Classify(c.err, c.n)
		if out != c.want || class != c.class {
			t.Errorf("%s: Classify = %s/%s, want %s/%s", c.name, out, class, c.want, c.class)
		}
	}
}

// mustCreate creates the history file at path with shards buffers.
func mustCreate(tb testing.TB, path string, shards int) *Writer {
	tb.Helper()
	w, err := Create(path, shards)
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// writeHistory logs writes through a Writer the way the runner does.
func writeHistory(t *testing.T, path string, fn func(w *Writer)) {
	t.Helper()
	w := mustCreate(t, path, 4)
	fn(w)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestWriteRead(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "history.log")
	writeHistory(t, path, func(w *Writer) {
		l := w.Log(1)
		l.Writing(10, 1)
		l.Done(nil)
		l.Writing(11, 5) // bulk
		l.Done(nil)
		l.Writing(16, 1)
		l.Done(metrics.WithClass(metrics.Rejected, errors.New("busy")))
		l.Writing(17, 1)
		l.Done(context.DeadlineExceeded)
		l.Done(nil) // nothing pending: no line
		l2 := w.Log(2)
		l2.Writing(18, 2) // in flight: no outcome
	})
	h, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if h.Torn {
		t.Error("torn after a clean close")
	}
	c := h.Counts()
	if c.Attempted != 10 || c.OK != 6 || c.Failed != 1 || c.Unknown != 1 || c.InFlight != 2 {
		t.Errorf("counts %+v, want attempted 10, ok 6, failed 1, unknown 1, in flight 2", c)
	}
	if c.UnknownByClass["timeout"] != 1 || c.UnknownByClass["in_flight"] != 2 {
		t.Errorf("unknown by class %v", c.UnknownByClass)
	}
	a := Summarize(h)
	if a.Attempted != 10 || a.Acknowledged != 6 || a.Failed != 1 || a.Unknown != 3 || a.Checked {
		t.Errorf("summary %+v", a)
	}
}

// TestCrash reads what a writer streamed while it is still open (a process
// killed mid-run: nothing closed it), then the same file with a torn last
// line appended.
func TestCrash(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "history.log")
	w, err := Create(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	l := w.Log(0)
	for i := range int64(100) {
		l.Writing(i, 1)
		l.Done(nil)
	}
	l.Writing(100, 1) // in flight at the "crash"
	var h *History
	deadline := time.Now().Add(30 * time.Second)
	for {
		if h, err = ReadFile(path); err != nil {
			t.Fatal(err)
		}
		if h.ItemWrites() == 101 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	c := h.Counts()
	if c.OK != 100 || c.InFlight != 1 {
		t.Fatalf("streamed history: %+v, want 100 ok and 1 in flight (the flusher writes every second)", c)
	}
	// A dying process's last, partial write.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(tornTail()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if h, err = ReadFile(path); err != nil {
		t.Fatal(err)
	}
	c = h.Counts()
	if !h.Torn || c.OK != 101 || c.InFlight != 1 || c.Attempted != 102 {
		t.Fatalf("torn history: torn=%v %+v, want torn, 101 ok, 1 in flight of 102", h.Torn, c)
	}
}

func TestReadErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, text, want string }{
		{"no header", "i 1 1\n", "line 1"},
		{"bad tag", headerV2 + "\nx 1 1\n", "line 2"},
		{"bad count", headerV2 + "\ni 1 0\n", "bad item count"},
		{"bad first", headerV2 + "\ni one 1\n", "bad first item"},
		{"outcome without invocation", headerV2 + "\no 5 1\n", "not invoked"},
		{"double invocation", headerV2 + "\ni 5 1\ni 5 1\n", "invoked twice"},
		{"short line", headerV2 + "\ni 5\n", "want TAG FIRST N"},
		{"binary: outcome without invocation", Header + "\n" + string(block(appendItemRec(nil, &deltas{}, kindItemOK, 0, 5, 1))), "not invoked"},
		{"binary: unknown kind", Header + "\n" + string(block([]byte{15, 0})), "unknown record kind"},
		{"binary: record cut short", Header + "\n" + string(block([]byte{kindItemInvoked})), "ends early"},
		{"binary: bad checksum before the end", Header + "\n" + string(corrupt(block(appendItemRec(nil, &deltas{}, kindItemInvoked, 0, 5, 1)))) +
			string(block(appendItemRec(nil, &deltas{}, kindItemInvoked, 0, 6, 1))), "checksum"},
	}
	for _, c := range cases {
		_, err := Read(strings.NewReader(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want one containing %q", c.name, err, c.want)
		}
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "none")); !errors.Is(err, ErrNoHistory) {
		t.Errorf("missing file: %v, want ErrNoHistory", err)
	}
	// A torn header is an empty history, not an error.
	h, err := Read(strings.NewReader(Header[:5]))
	if err != nil || !h.Torn || h.ItemWrites() != 0 {
		t.Errorf("torn header: %v %+v", err, h)
	}
}

// TestConcurrentLogs has many sessions log at once (run with -race).
func TestConcurrentLogs(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "history.log")
	const sessions, per = 16, 500
	writeHistory(t, path, func(w *Writer) {
		var wg sync.WaitGroup
		for s := range sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l := w.Log(uint64(s))
				for i := range per {
					l.Writing(int64(s*per+i), 1)
					l.Done(nil)
				}
			}()
		}
		wg.Wait()
	})
	h, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if c := h.Counts(); c.OK != sessions*per || c.Attempted != sessions*per {
		t.Fatalf("counts %+v, want %d ok", c, sessions*per)
	}
}

// store is a ReadBacker over a set of ids, failing the first calls when
// asked to.
type store struct {
	has   map[int64]bool
	fail  atomic.Int64 // calls left to fail
	calls atomic.Int64
	block chan struct{} // when set, calls wait on it (or the context)
}

func (s *store) ReadBack(ctx context.Context, ids []int64, present []bool) error {
	s.calls.Add(1)
	if s.block != nil {
		select {
		case <-s.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if s.fail.Add(-1) >= 0 {
		return errors.New("connection reset")
	}
	for i, id := range ids {
		present[i] = s.has[id]
	}
	return nil
}

// testZip compresses the blocks tests make (block).
var testZip = struct {
	sync.Mutex
	enc *zstd.Encoder
}{enc: newCompressor()}

// block compresses and frames a payload as the writer does.
func block(payload []byte) []byte {
	testZip.Lock()
	packed := testZip.enc.EncodeAll(payload, nil)
	testZip.Unlock()
	return append(frame(nil, packed), packed...)
}

// corrupt flips a bit of a block's last byte.
func corrupt(b []byte) []byte {
	b[len(b)-1] ^= 1
	return b
}

// tornTail is what a process dying mid-write leaves after the whole
// blocks: a whole block (item 100 acknowledged, item 101 invoked), then
// the start of another.
func tornTail() []byte {
	var d deltas
	p := appendItemRec(nil, &d, kindItemOK, 0, 100, 1)
	p = appendItemRec(p, &d, kindItemInvoked, 0, 101, 1)
	b := block(p)
	next := block(appendItemRec(nil, &deltas{}, kindItemOK, 0, 101, 1))
	return append(b, next[:len(next)-1]...)
}

func TestCheck(t *testing.T) {
	t.Parallel()
	h := history(
		Span{First: 0, N: 1000, Outcome: OK},
		Span{First: 1000, N: 10, Outcome: Unknown, Class: metrics.Timeout},
		Span{First: 1010, N: 2, Outcome: Invoked},
		Span{First: 1012, N: 3, Outcome: Failed, Class: metrics.Rejected},
	)
	s := &store{has: map[int64]bool{}}
	for id := range int64(1015) {
		s.has[id] = true
	}
	for _, id := range []int64{977, 3, 500} { // lost
		delete(s.has, id)
	}
	for _, id := range []int64{1000, 1001, 1010, 1012, 1013} { // unknown absent x3, failed absent x2
		delete(s.has, id)
	}
	s.fail.Store(2) // two transient errors, retried
	var progress strings.Builder
	a, err := Check(context.Background(), h, s, CheckConfig{Batch: 64, Workers: 3, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Checked || a.ReadBack != 1015 || a.Attempted != 1015 {
		t.Fatalf("checked %v, read back %d of %d", a.Checked, a.ReadBack, a.Attempted)
	}
	if a.Lost != 3 || fmt.Sprint(a.LostIDs) != "[3 500 977]" {
		t.Errorf("lost %d %v, want 3 [3 500 977]", a.Lost, a.LostIDs)
	}
	if a.UnknownPresent != 9 || a.UnknownAbsent != 3 || a.Unknown != 12 {
		t.Errorf("unknown %d: present %d absent %d, want 12: 9 and 3", a.Unknown, a.UnknownPresent, a.UnknownAbsent)
	}
	if a.FailedPresent != 1 {
		t.Errorf("failed present %d, want 1", a.FailedPresent)
	}
}

func TestCheckMaxIDs(t *testing.T) {
	t.Parallel()
	s := &store{has: map[int64]bool{}}
	a, err := Check(context.Background(), history(Span{First: 100, N: 50, Outcome: OK}), s, CheckConfig{MaxIDs: 5})
	if err != nil {
		t.Fatal(err)
	}
	if a.Lost != 50 || fmt.Sprint(a.LostIDs) != "[100 101 102 103 104]" {
		t.Errorf("lost %d %v, want 50 and the first five ids", a.Lost, a.LostIDs)
	}
	// ids found lost in any order (workers read back batches in parallel):
	// the lowest are listed, however many more there were
	c := &itemCheck{cfg: &CheckConfig{MaxIDs: 5}}
	for id := int64(100000); id > 0; id -= 7 {
		c.keepLost(id)
	}
	var got results.Audit
	c.fill(&got)
	if fmt.Sprint(got.LostIDs) != "[5 12 19 26 33]" || cap(c.lost) > 64 {
		t.Errorf("kept %v (capacity %d), want the five lowest [5 12 19 26 33]", got.LostIDs, cap(c.lost))
	}
}

func TestCheckFails(t *testing.T) {
	t.Parallel()
	h := history(Span{First: 0, N: 10, Outcome: OK})
	s := &store{has: map[int64]bool{}}
	s.fail.Store(1 << 30)
	a, err := Check(context.Background(), h, s, CheckConfig{Retries: 2})
	if err == nil || a.Checked || !strings.Contains(a.Error, "connection reset") {
		t.Fatalf("err %v, audit %+v: want an unchecked audit naming the read-back error", err, a)
	}
	if n := s.calls.Load(); n != 3 {
		t.Errorf("%d read-back calls, want 1 + 2 retries", n)
	}
	// Bounded time: a store that never answers.
	s = &store{has: map[int64]bool{}, block: make(chan struct{})}
	a, err = Check(context.Background(), h, s, CheckConfig{Timeout: 200 * time.Millisecond, Retries: 1})
	if err == nil || a.Checked || a.ReadBack != 0 {
		t.Fatalf("blocked store: err %v, audit %+v", err, a)
	}
}

func TestCheckEmpty(t *testing.T) {
	t.Parallel()
	a, err := Check(context.Background(), history(), &store{}, CheckConfig{})
	if err != nil || !a.Checked || a.Attempted != 0 {
		t.Fatalf("empty: %v %+v", err, a)
	}
}

func TestParseInt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"42", 42, true}, {"-7", -7, true}, {"9223372036854775807", 1<<63 - 1, true},
		{"-9223372036854775807", -(1<<63 - 1), true},
		{"9223372036854775808", 0, false}, {"", 0, false}, {"-", 0, false}, {"1x", 0, false}, {"+1", 0, false},
	} {
		v, ok := parseInt([]byte(c.in))
		if v != c.want || ok != c.ok {
			t.Errorf("parseInt(%q) = %d, %v", c.in, v, ok)
		}
	}
}

// A text history of an earlier build (v2) is read into the same History:
// item counts, register verdicts, a torn last line ignored.
func TestReadTextHistory(t *testing.T) {
	t.Parallel()
	text := headerV2 + "\n" +
		"i 1 1\no 1 1\ni 2 5\nu 2 5 timeout\ni 7 1\n" + // 1 ok, 5 unknown, 1 in flight
		"w 4 1 10\nO 4 1 12\nw 4 2 20\nO 4 2 30\n" + // register 4: v1 then v2, sequential
		"x 5 3 40\nU 5 3 45 timeout\n" + // register 5: a delete of unknown outcome
		"o 7"
	h, err := Read(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	c := h.Counts()
	if !h.Torn || c.Attempted != 7 || c.OK != 1 || c.Unknown != 5 || c.InFlight != 1 {
		t.Fatalf("torn %v, counts %+v", h.Torn, c)
	}
	keys := h.registerList()
	if len(keys) != 2 || !keys[0].allows(2) || keys[0].allows(1) || !keys[1].allows(Absent) || !keys[1].allows(Initial) {
		t.Fatalf("registers %+v", keys)
	}
	if h.MaxVersion() != 3 || h.RegisterWrites() != 3 {
		t.Errorf("max version %d, %d register writes", h.MaxVersion(), h.RegisterWrites())
	}
}
