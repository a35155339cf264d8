package liveexport

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/encoding/protowire"
)

// PushTokenEnv holds a bearer token for the remote-write endpoint.
const PushTokenEnv = "SCALELAB_METRICS_PUSH_TOKEN"

// CheckPushURL checks a --metrics-push URL: http(s), no credentials in it.
func CheckPushURL(u string) error {
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
		return fmt.Errorf("--metrics-push: want the http(s) URL of a Prometheus remote-write endpoint, e.g. http://127.0.0.1:9090/api/v1/write")
	}
	if pu.User != nil {
		return fmt.Errorf("--metrics-push: the URL holds credentials; give a bearer token in %s instead", PushTokenEnv)
	}
	return nil
}

// Pusher sends an exporter's figures to a Prometheus remote-write
// endpoint (protocol 1.0: a snappy-compressed protobuf WriteRequest) every
// interval and once at the end.
type Pusher struct {
	url      string
	token    string
	gather   prometheus.Gatherer
	extra    [][2]string
	client   *http.Client
	interval time.Duration
	stop     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	pushes   int
	errs     map[string]int
}

// StartPush pushes e's figures to url every interval (5 s when zero), with
// the labels job="scalelab" and instance (this host's name).
func StartPush(u string, e *Exporter, interval time.Duration) (*Pusher, error) {
	if err := CheckPushURL(u); err != nil {
		return nil, err
	}
	if interval <= 0 {
		interval = 5 * time.Second
	}
	host, _ := os.Hostname()
	p := &Pusher{url: u, token: os.Getenv(PushTokenEnv), gather: Registry(e), extra: [][2]string{{"job", "scalelab"}, {"instance", host}},
		client: &http.Client{Timeout: 10 * time.Second}, interval: interval, stop: make(chan struct{}), done: make(chan struct{}), errs: map[string]int{}}
	go p.loop()
	return p, nil
}

func (p *Pusher) loop() {
	defer close(p.done)
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.pushOnce()
		}
	}
}

// Stop pushes the final figures and returns the failures (each distinct
// error with how many pushes it failed), or nil.
func (p *Pusher) Stop() []string {
	close(p.stop)
	<-p.done
	p.pushOnce()
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for e, n := range p.errs {
		out = append(out, fmt.Sprintf("%s (%d of %d pushes)", e, n, p.pushes))
	}
	sort.Strings(out)
	return out
}

func (p *Pusher) pushOnce() {
	err := p.push()
	p.mu.Lock()
	p.pushes++
	if err != nil {
		p.errs[err.Error()]++
	}
	p.mu.Unlock()
}

func (p *Pusher) push() error {
	fams, err := p.gather.Gather()
	if err != nil {
		return fmt.Errorf("gather: %w", err)
	}
	body := snappy.Encode(nil, EncodeWriteRequest(fams, p.extra, time.Now()))
	req, err := http.NewRequest(http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("remote write: %w", err)
	}
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("remote write to %s: %w", p.url, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("remote write to %s: %s %s", p.url, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}

// series is one sample of a time series: its sorted labels and value.
type series struct {
	labels [][2]string
	value  float64
}

// EncodeWriteRequest writes the families as a remote-write 1.0
// WriteRequest (prometheus/prompb's wire format: repeated TimeSeries
// {repeated Label{name, value}, repeated Sample{value, timestamp}}), one
// sample at ts per series; histograms and summaries become their _bucket,
// _sum, _count and quantile series as the text format writes them.
func EncodeWriteRequest(fams []*dto.MetricFamily, extra [][2]string, ts time.Time) []byte {
	ms := ts.UnixMilli()
	var out []byte
	for _, f := range fams {
		for _, m := range f.Metric {
			base := append([][2]string{}, extra...)
			for _, l := range m.Label {
				base = append(base, [2]string{l.GetName(), l.GetValue()})
			}
			for _, s := range flatten(f, m, base) {
				out = protowire.AppendTag(out, 1, protowire.BytesType)
				out = protowire.AppendBytes(out, encodeSeries(s, ms))
			}
		}
	}
	return out
}

func flatten(f *dto.MetricFamily, m *dto.Metric, base [][2]string) []series {
	name := f.GetName()
	with := func(n string, more ...[2]string) [][2]string {
		l := append([][2]string{{"__name__", n}}, base...)
		return append(l, more...)
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	switch f.GetType() {
	case dto.MetricType_COUNTER:
		return []series{{with(name), m.GetCounter().GetValue()}}
	case dto.MetricType_GAUGE:
		return []series{{with(name), m.GetGauge().GetValue()}}
	case dto.MetricType_HISTOGRAM:
		h := m.GetHistogram()
		var out []series
		for _, b := range h.Bucket {
			out = append(out, series{with(name+"_bucket", [2]string{"le", g(b.GetUpperBound())}), float64(b.GetCumulativeCount())})
		}
		out = append(out, series{with(name+"_bucket", [2]string{"le", "+Inf"}), float64(h.GetSampleCount())})
		return append(out, series{with(name + "_sum"), h.GetSampleSum()}, series{with(name + "_count"), float64(h.GetSampleCount())})
	case dto.MetricType_SUMMARY:
		s := m.GetSummary()
		var out []series
		for _, q := range s.Quantile {
			out = append(out, series{with(name, [2]string{"quantile", g(q.GetQuantile())}), q.GetValue()})
		}
		return append(out, series{with(name + "_sum"), s.GetSampleSum()}, series{with(name + "_count"), float64(s.GetSampleCount())})
	}
	return []series{{with(name), m.GetUntyped().GetValue()}}
}

// encodeSeries writes one TimeSeries: labels sorted by name, one sample.
func encodeSeries(s series, ms int64) []byte {
	sort.Slice(s.labels, func(i, j int) bool { return s.labels[i][0] < s.labels[j][0] })
	var b []byte
	for _, l := range s.labels {
		var lb []byte
		lb = protowire.AppendTag(lb, 1, protowire.BytesType)
		lb = protowire.AppendString(lb, l[0])
		lb = protowire.AppendTag(lb, 2, protowire.BytesType)
		lb = protowire.AppendString(lb, l[1])
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, lb)
	}
	var sb []byte
	sb = protowire.AppendTag(sb, 1, protowire.Fixed64Type)
	sb = protowire.AppendFixed64(sb, math.Float64bits(s.value))
	sb = protowire.AppendTag(sb, 2, protowire.VarintType)
	sb = protowire.AppendVarint(sb, uint64(ms))
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	return protowire.AppendBytes(b, sb)
}
