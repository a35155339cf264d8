package metrics

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

func TestMinCountFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    float64
		want int64
	}{{50, 2}, {90, 10}, {95, 20}, {99, 100}, {99.9, 1000}} {
		if got := MinCountFor(tc.p); got != tc.want {
			t.Errorf("MinCountFor(%v) = %d, want %d", tc.p, got, tc.want)
		}
	}
}

func TestPercentileNullBelowSupport(t *testing.T) {
	t.Parallel()
	h := NewHist()
	for i := 1; i <= 99; i++ {
		h.RecordValue(int64(i) * 1_000_000)
	}
	if PercentileMs(h, 99) != nil {
		t.Fatal("p99 of 99 samples must be null")
	}
	p95 := PercentileMs(h, 95)
	if p95 == nil || *p95 < 94 || *p95 > 96 {
		t.Fatalf("p95 = %v, want about 95 ms", p95)
	}
	h.RecordValue(100_000_000)
	if v := PercentileMs(h, 99); v == nil || *v < 98.9 || *v > 99.2 {
		t.Fatalf("p99 of 100 samples = %v, want about 99 ms", v)
	}
}

// TestConcurrentRecordAndFlip records from many goroutines while the
// collector flips intervals, and checks that no record is lost or counted
// twice.
func TestConcurrentRecordAndFlip(t *testing.T) {
	t.Parallel()
	c := NewCollector(Config{Ops: []string{"a", "b"}})
	const workers, per = 8, 20000
	recs := make([]*Recorder, workers)
	for i := range recs {
		recs[i] = c.NewRecorder()
	}
	c.Begin()
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func(r *Recorder) {
			defer wg.Done()
			for j := 0; j < per; j++ {
				cl := OK
				if j%10 == 0 {
					cl = Timeout
				}
				r.Record(j%2, cl, int64(j)*1000, 0, 0)
			}
		}(recs[i])
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	flips := 0
loop:
	for {
		select {
		case <-done:
			break loop
		default:
			c.Flush()
			flips++
		}
	}
	c.Flush()
	totals, _, _ := c.Totals()
	var ok, errs int64
	for i := range totals {
		ok += totals[i].Count()
		errs += totals[i].Errors()
	}
	if ok+errs != workers*per || errs != workers*per/10 {
		t.Fatalf("ok %d + errors %d != %d (errors want %d) after %d flips", ok, errs, workers*per, workers*per/10, flips)
	}
}

func TestPoolSharesRecorders(t *testing.T) {
	t.Parallel()
	c := NewCollector(Config{Ops: []string{"x"}, Open: true})
	p := c.NewPool(4)
	c.Begin()
	var wg sync.WaitGroup
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 1000; j++ {
				r := p.Get(uint32(i))
				r.RecordLag(0, 15_000_000)
				r.Record(0, OK, 2_000_000, 1_000_000, 0)
				p.Put(r)
			}
		}(i)
	}
	wg.Wait()
	c.Flush()
	totals, lag, _ := c.Totals()
	if totals[0].Count() != 64000 || totals[0].Svc.TotalCount() != 64000 || lag.TotalCount() != 64000 || totals[0].Late != 64000 {
		t.Fatalf("count %d svc %d lag %d late %d, want 64000 each", totals[0].Count(), totals[0].Svc.TotalCount(), lag.TotalCount(), totals[0].Late)
	}
}

func TestWarmupExcludedAndSummary(t *testing.T) {
	t.Parallel()
	c, r := begun(Config{Ops: []string{"read"}, Warmup: time.Hour})
	r.Record(0, OK, 1e6, 1e6, 0)
	c.Flush()
	totals, _, measured := c.Totals()
	if totals[0].Count() != 0 || measured != 0 {
		t.Fatalf("warm-up interval counted: count %d measured %s", totals[0].Count(), measured)
	}
	c2, r2 := begun(Config{Ops: []string{"read", "never"}})
	for i := 0; i < 10; i++ {
		r2.Record(0, OK, 2e6, 2e6, 0)
	}
	r2.Record(0, NotFound, 1e6, 1e6, 0)
	r2.Start(0) // one still in flight
	c2.Flush()
	totals, _, measured = c2.Totals()
	s := Summarize(totals, measured, c2.InFlight())
	if len(s) != 1 {
		t.Fatalf("want only the operation that ran, got %d summaries", len(s))
	}
	o := s[0]
	if o.Count != 10 || o.Errors != 1 || o.InFlight != 1 || o.Started != 12 || o.ErrorsByClass["not_found"] != 1 {
		t.Fatalf("summary %+v", o)
	}
	if o.P99Ms != nil || o.P90Ms == nil || *o.P90Ms < 1.99 || *o.P90Ms > 2.01 {
		t.Fatalf("p99 must be null with 10 samples, p90 about 2 ms: %+v", o)
	}
}

func TestHlogRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "intervals.hlog")
	start := time.Now()
	sink, err := NewHlogSink(path, start)
	if err != nil {
		t.Fatal(err)
	}
	c, r := begun(Config{Ops: []string{"read", "update"}, Open: true, Sinks: []Sink{sink}})
	for iv := 0; iv < 3; iv++ {
		for i := 0; i < 100*(iv+1); i++ {
			r.Record(0, OK, int64(i+1)*10_000, 5000, 0)
		}
		r.Record(1, OK, 3_000_000, 2_000_000, 0)
		c.Flush()
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if !strings.Contains(string(raw), "#[StartTime:") || !strings.Contains(string(raw), "Tag=read,") || !strings.Contains(string(raw), "Tag=update.service,") {
		t.Fatalf("log lacks header or tags:\n%s", raw)
	}
	rd := hdr.NewHistogramLogReader(bytes.NewReader(raw))
	counts := map[string]int64{}
	for {
		h, err := rd.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		counts[h.Tag()] += h.TotalCount()
	}
	if counts["read"] != 600 || counts["update"] != 3 || counts["read.service"] != 600 {
		t.Fatalf("counts read back %v", counts)
	}
}

func TestSeriesSinkRows(t *testing.T) {
	t.Parallel()
	path, s := newSeriesSink(t)
	c, r := begun(Config{Ops: []string{"read"}, Sinks: []Sink{s}})
	for i := 0; i < 150; i++ {
		r.Record(0, OK, 1_000_000, 0, 0)
	}
	r.Record(0, Timeout, 0, 0, 0)
	c.Flush()
	c.Flush() // empty interval: no row
	s.Close()
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || lines[0]+"\n" != SeriesHeader {
		t.Fatalf("series.csv:\n%s", b)
	}
	f := strings.Split(lines[1], ",")
	if f[2] != "read" || f[3] != "150" || f[4] != "1" || f[6] != "1.000" || f[7] != "1.000" {
		t.Fatalf("row %q", lines[1])
	}
	// A closed model records no lag: its lag columns are empty.
	if n := len(f); n != 16 || f[13] != "" || f[14] != "" || f[15] != "" {
		t.Fatalf("row %q: want 16 columns, the lag ones empty", lines[1])
	}
}

// TestSeriesSinkLag: an open model's rows carry the interval's schedule
// lag percentiles, the same on each operation's row.
func TestSeriesSinkLag(t *testing.T) {
	t.Parallel()
	path, s := newSeriesSink(t)
	c, r := begun(Config{Ops: []string{"read", "update"}, Open: true, Sinks: []Sink{s}})
	for i := range 200 {
		lag := int64(100_000) // 0.1 ms
		if i >= 197 {
			lag = 40_000_000 // 40 ms: the top 1.5 %
		}
		r.RecordLag(i%2, lag)
		r.Record(i%2, OK, 1_000_000, 500_000, 0)
	}
	c.Flush()
	s.Close()
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 {
		t.Fatalf("series.csv:\n%s", b)
	}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if f[13] != "0.100" || f[14] != "40.010" || f[15] != "40.010" {
			t.Errorf("row %q: lag p50, p99, max want 0.100, 40.010, 40.010", l)
		}
	}
}

func TestClassOf(t *testing.T) {
	t.Parallel()
	if ClassOf(nil) != OK || ClassOf(os.ErrDeadlineExceeded) != Timeout || ClassOf(WithClass(Rejected, os.ErrClosed)) != Rejected || ClassOf(os.ErrClosed) != Other {
		t.Fatal("classification wrong")
	}
	// a node that closed the connection before its answer (going down)
	for _, err := range []error{fmt.Errorf("POST /logs/_count: %w", io.EOF), io.ErrUnexpectedEOF, syscall.ECONNRESET, syscall.EPIPE} {
		if c := ClassOf(err); c != Refused {
			t.Errorf("%v: class %v, want refused", err, c)
		}
	}
}

// BenchmarkRecord measures recording one latency into a worker's recorder
// (the hot path; target: at most 50 ns).
func BenchmarkRecord(b *testing.B) {
	_, r := begun(Config{Ops: []string{"read"}})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Record(0, OK, int64(i&0xfffff)*100, 0, 0)
	}
}

// BenchmarkNow measures one clock read.
func BenchmarkNow(b *testing.B) {
	var s int64
	for i := 0; i < b.N; i++ {
		s += Now()
	}
	_ = s
}

func TestErrorSamples(t *testing.T) {
	t.Parallel()
	c := NewCollector(Config{Ops: []string{"a", "b"}})
	for i := 0; i < 100; i++ {
		c.NoteError(0, fmt.Errorf("failure %d", i%7))
		c.NoteError(0, errors.New("same"))
	}
	c.NoteError(1, errors.New(`dial postgres://scalelab:s3cret@127.0.0.1:5432/db: password=hunter2 refused`))
	c.NoteError(1, nil)
	got := c.ErrorSamples()
	if len(got[0]) != MaxErrorSamples {
		t.Fatalf("kept %d samples: %v", len(got[0]), got[0])
	}
	if len(got[1]) != 1 || strings.Contains(got[1][0], "s3cret") || strings.Contains(got[1][0], "hunter2") || !strings.Contains(got[1][0], "REDACTED") {
		t.Fatalf("secret not redacted: %v", got[1])
	}
}

// begun is a collector of cfg that has begun, with one recorder.
func begun(cfg Config) (*Collector, *Recorder) {
	c := NewCollector(cfg)
	r := c.NewRecorder()
	c.Begin()
	return c, r
}

// newSeriesSink is a SeriesSink writing series.csv in a fresh directory,
// and that file's path.
func newSeriesSink(t *testing.T) (string, *SeriesSink) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "series.csv")
	s, err := NewSeriesSink(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, s
}

// Redact replaces passwords in URLs and password=/secret= pairs, and
// leaves messages that only speak of a secret (its file) readable.
func TestRedact(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"dial postgres://bob:S3cret@h:5432/db: refused":        "dial postgres://bob:REDACTED@h:5432/db: refused",
		"redis://:S3cret@127.0.0.1:6379/0 refused":             "redis://:REDACTED@127.0.0.1:6379/0 refused",
		"postgres://bob:p@ss@h/db":                             "postgres://bob:REDACTED@h/db",
		"host=h user=u password=S3cret dbname=d":               "host=h user=u password=REDACTED dbname=d",
		`password="S3 cret" host=h`:                            "password=REDACTED host=h",
		"api token=abc123 refused":                             "api token=REDACTED refused",
		`Get "http://127.0.0.1:8080/u/alice@example.com": EOF`: `Get "http://127.0.0.1:8080/u/alice@example.com": EOF`,
		"read secret: open /run/s: no such file or directory":  "read secret: open /run/s: no such file or directory",
		"records: seed password: bcrypt: cost 40 out of range": "records: seed password: bcrypt: cost 40 out of range",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
