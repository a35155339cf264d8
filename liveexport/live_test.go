package liveexport

import (
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/scalelab/scalelab/audit"
	"github.com/scalelab/scalelab/metrics"
)

// interval builds a closed interval of op with n latencies spread from
// 1 to n*10 µs and errs timeouts.
func interval(op string, n int, errs int64, warmup bool) *metrics.Interval {
	s := metrics.OpStats{Name: op, Lat: metrics.NewHist(), Err: metrics.NewHist()}
	for i := 1; i <= n; i++ {
		s.Lat.RecordValue(int64(i) * 10_000)
	}
	s.Errs[metrics.Timeout] = errs
	return &metrics.Interval{StartNs: 0, EndNs: 1e9, Warmup: warmup, Ops: []metrics.OpStats{s}, Lag: metrics.NewHist(), Sessions: 8}
}

func gather(t *testing.T, e *Exporter) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := Registry(e).Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// TestExporterTotals: the warm-up is left out of the counts as run.json
// leaves it out; errors by class, the histogram's buckets and the
// quantiles match the run's HdrHistogram; labels name the run.
func TestExporterTotals(t *testing.T) {
	e := New(Labels{Scenario: "ycsb", Engine: "null", Segment: "0", Segments: "1"}, []string{"read"})
	e.WatchAudit(func() audit.LiveCounts { return audit.LiveCounts{Invoked: 7, OK: 5, Failed: 1, Unknown: 1} })
	_ = e.Interval(interval("read", 50, 9, true))
	_ = e.Interval(interval("read", 1000, 3, false))
	_ = e.Interval(interval("read", 1000, 2, false))
	all := metrics.NewHist()
	for range 2 {
		all.Merge(interval("read", 1000, 0, false).Ops[0].Lat)
	}
	f := gather(t, e)
	ops := f["scalelab_operations_total"].Metric[0]
	if ops.GetCounter().GetValue() != 2000 {
		t.Errorf("operations %v, want 2000 (warm-up excluded)", ops.GetCounter().GetValue())
	}
	labels := map[string]string{}
	for _, l := range ops.Label {
		labels[l.GetName()] = l.GetValue()
	}
	if labels["scenario"] != "ycsb" || labels["engine"] != "null" || labels["segment"] != "0" || labels["op"] != "read" {
		t.Errorf("labels %v", labels)
	}
	var timeouts float64
	for _, m := range f["scalelab_errors_total"].Metric {
		for _, l := range m.Label {
			if l.GetName() == "class" && l.GetValue() == "timeout" {
				timeouts = m.GetCounter().GetValue()
			}
		}
	}
	if timeouts != 5 {
		t.Errorf("timeouts %v, want 5", timeouts)
	}
	h := f["scalelab_latency_seconds"].Metric[0].GetHistogram()
	if h.GetSampleCount() != 2000 || len(h.Bucket) != len(Buckets) {
		t.Fatalf("histogram count %d, %d buckets", h.GetSampleCount(), len(h.Bucket))
	}
	for _, b := range h.Bucket {
		// values are 10 µs .. 10 ms in steps of 10 µs, twice
		want := 2 * min(1000, math.Floor(b.GetUpperBound()*1e9/10_000*1.001))
		if got := float64(b.GetCumulativeCount()); math.Abs(got-want) > 2+want*0.002 {
			t.Errorf("bucket le=%g: %v, want about %v", b.GetUpperBound(), got, want)
		}
	}
	for _, q := range f["scalelab_latency_quantile_seconds"].Metric[0].GetSummary().Quantile {
		want := float64(all.ValueAtPercentile(q.GetQuantile()*100)) / 1e9
		if q.GetValue() != want {
			t.Errorf("quantile %g: %v, want %v", q.GetQuantile(), q.GetValue(), want)
		}
		if q.GetQuantile() == 0.99 && *metrics.PercentileMs(all, 99) != q.GetValue()*1e3 {
			t.Errorf("p99 %v s differs from run.json's %v ms", q.GetValue(), *metrics.PercentileMs(all, 99))
		}
	}
	if got := f["scalelab_audit_writes_total"].Metric; len(got) != 4 {
		t.Errorf("audit series %d, want 4", len(got))
	}
	if s := f["scalelab_sessions"].Metric[0].GetGauge().GetValue(); s != 8 {
		t.Errorf("sessions %v", s)
	}
}

// TestServeAndWaitForLastScrape: the endpoint serves the text format, and
// Close waits for one more scrape once the figures have been scraped.
func TestServeAndWaitForLastScrape(t *testing.T) {
	e := New(Labels{Scenario: "ycsb", Engine: "null", Segment: "0", Segments: "1"}, []string{"read"})
	s, err := Serve("127.0.0.1:0", e)
	if err != nil {
		t.Fatal(err)
	}
	get := func() string {
		resp, err := http.Get("http://" + s.Addr() + Path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if body := get(); !strings.Contains(body, `scalelab_operations_total{engine="null",op="read",scenario="ycsb",segment="0",segments="1"} 0`) {
		t.Fatalf("body:\n%s", body)
	}
	go func() { time.Sleep(300 * time.Millisecond); get() }()
	start := time.Now()
	if err := s.Close(5*time.Second, func(string) {}); err != nil {
		t.Fatal(err)
	}
	if s.Scrapes() != 2 || time.Since(start) < 250*time.Millisecond {
		t.Errorf("closed after %s with %d scrapes; want it to wait for the second", time.Since(start), s.Scrapes())
	}
	if _, err := Serve("127.0.0.1:99999", e); err == nil || !strings.Contains(err.Error(), "--metrics-listen") {
		t.Errorf("bad address: %v", err)
	}
}

// TestEncodeWriteRequest decodes the remote-write body back: every
// series with its labels sorted and one sample.
func TestEncodeWriteRequest(t *testing.T) {
	e := New(Labels{Scenario: "ycsb", Engine: "null", Segment: "0", Segments: "1"}, []string{"read"})
	_ = e.Interval(interval("read", 10, 0, false))
	fams, err := Registry(e).Gather()
	if err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(1_700_000_000_123)
	body := EncodeWriteRequest(fams, [][2]string{{"job", "scalelab"}}, at)
	dec, err := snappy.Decode(nil, snappy.Encode(nil, body))
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]float64{}
	for len(dec) > 0 {
		num, typ, n := protowire.ConsumeTag(dec)
		if num != 1 || typ != protowire.BytesType {
			t.Fatalf("WriteRequest field %d type %d", num, typ)
		}
		dec = dec[n:]
		ts, n := protowire.ConsumeBytes(dec)
		dec = dec[n:]
		var labels []string
		var name string
		var value float64
		var ms int64
		for len(ts) > 0 {
			num, _, n := protowire.ConsumeTag(ts)
			ts = ts[n:]
			b, n := protowire.ConsumeBytes(ts)
			ts = ts[n:]
			for len(b) > 0 {
				f, _, n := protowire.ConsumeTag(b)
				b = b[n:]
				switch {
				case num == 1:
					s, n := protowire.ConsumeString(b)
					b = b[n:]
					labels = append(labels, s)
					if f == 2 && len(labels) >= 2 && labels[len(labels)-2] == "__name__" {
						name = s
					}
				case f == 1:
					v, n := protowire.ConsumeFixed64(b)
					b = b[n:]
					value = math.Float64frombits(v)
				default:
					v, n := protowire.ConsumeVarint(b)
					b = b[n:]
					ms = int64(v)
				}
			}
		}
		if ms != at.UnixMilli() || labels[0] != "__name__" {
			t.Fatalf("series %v at %d", labels, ms)
		}
		for i := 2; i+1 < len(labels); i += 2 {
			if labels[i-2] > labels[i] {
				t.Fatalf("labels not sorted: %v", labels)
			}
		}
		if strings.Join(labels, ",") == "__name__,scalelab_operations_total,engine,null,job,scalelab,op,read,scenario,ycsb,segment,0,segments,1" {
			found[name] = value
		}
		if name == "scalelab_latency_seconds_count" {
			found[name] = value
		}
	}
	if found["scalelab_operations_total"] != 10 || found["scalelab_latency_seconds_count"] != 10 {
		t.Errorf("decoded %v", found)
	}
}

// BenchmarkExporterPerSecond is the exporter's work for one second of a
// run at the null engine's ceiling (3,000,000 operations a second over 4
// operations): adding the interval and one scrape. Its cost per
// operation is that divided by 3,000,000 (reported as ns/run-op and as a
// share of the 333 ns an operation takes at the ceiling on one core).
func BenchmarkExporterPerSecond(b *testing.B) {
	ops := []string{"read", "update", "insert", "scan"}
	e := New(Labels{Scenario: "ycsb", Engine: "null", Segment: "0", Segments: "1"}, ops)
	iv := &metrics.Interval{EndNs: 1e9, Lag: metrics.NewHist()}
	for _, op := range ops {
		s := metrics.OpStats{Name: op, Lat: metrics.NewHist(), Err: metrics.NewHist()}
		for i := 0; i < 750_000; i += 1000 {
			s.Lat.RecordValues(int64(1000+i%200_000), 1000)
		}
		iv.Ops = append(iv.Ops, s)
	}
	reg := Registry(e)
	b.ResetTimer()
	for range b.N {
		_ = e.Interval(iv)
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
	perSecond := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perSecond/3e6, "ns/run-op")
	b.ReportMetric(100*perSecond/3e6/(1e9/3e6), "%-of-ceiling-op")
}
