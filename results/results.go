// Package results owns a run's results directory: its layout, the run.json
// document (resolved configuration, host facts, status, exit code and
// summary) and crash-safe writes (temp file, fsync, rename).
package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/scalelab/scalelab/metrics"
)

// File names inside a results directory.
const (
	RunFile     = "run.json"
	HlogFile    = "intervals.hlog"
	SeriesFile  = "series.csv"
	SamplesFile = "samples.csv"
	ReportFile  = "report.html"
	// ConcurrencyFile holds the operations in flight per interval (load
	// models that count them: threads).
	ConcurrencyFile = "concurrency.csv"
)

// Statuses of a run.
const (
	StatusRunning     = "running" // written at the start; left behind by a crash
	StatusOK          = "ok"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
	StatusIncomplete  = "incomplete" // the process died; rebuilt from streamed files
)

// Run is the run.json document.
type Run struct {
	Scalelab       Version                      `json:"scalelab"`
	Status         string                       `json:"status"`
	ExitCode       int                          `json:"exit_code"`
	Error          string                       `json:"error,omitempty"`
	Failures       []string                     `json:"failures,omitempty"` // failed checks (integrity, SLO)
	SLO            []string                     `json:"slo,omitempty"`      // --slo: the objectives checked
	Warnings       []string                     `json:"warnings,omitempty"`
	Command        []string                     `json:"command"`
	Scenario       string                       `json:"scenario"`
	Engine         string                       `json:"engine"`
	Cluster        *ClusterRef                  `json:"cluster,omitempty"` // --cluster
	Server         *Server                      `json:"server,omitempty"`
	Tiers          []Tier                       `json:"tiers,omitempty"`  // connections beside the store, by role
	Settings       map[string]string            `json:"settings"`         // every setting, resolved
	Changed        []string                     `json:"changed_settings"` // keys differing from defaults
	Load           Load                         `json:"load"`
	Segment        *Segment                     `json:"segment,omitempty"` // --segment: one share of a divided test (segment.go)
	Merged         *Merged                      `json:"merged,omitempty"`  // built by `scalelab merge` (merged.go)
	Host           Host                         `json:"host"`
	Start          time.Time                    `json:"start"`
	LoadStart      *time.Time                   `json:"load_start,omitempty"` // when the load started: t = 0 of series.csv and of the report's charts over time
	End            *time.Time                   `json:"end,omitempty"`
	StopReason     string                       `json:"stop_reason,omitempty"`
	LoadPhase      *LoadPhase                   `json:"load_phase,omitempty"`
	MeasuredS      float64                      `json:"measured_s"` // length of the measured window (warm-up excluded)
	Intervals      int                          `json:"intervals"`
	Summary        map[string]metrics.OpSummary `json:"summary"`
	Totals         *Totals                      `json:"totals,omitempty"`
	Lag            *metrics.LagSummary          `json:"schedule_lag,omitempty"`    // open models
	MaxSessions    int64                        `json:"max_sessions,omitempty"`    // phases model; threads: most users active at once
	Concurrency    *Concurrency                 `json:"concurrency,omitempty"`     // operations in flight (threads model)
	ClientQueue    *ClientQueue                 `json:"client_queue,omitempty"`    // phases model: the workload's bound on operations at once
	Transactions   *Transactions                `json:"transactions,omitempty"`    // every request's duration over time and by phase, the break (transactions.go)
	ScenarioReport map[string]any               `json:"scenario_report,omitempty"` // scenario.Reporter figures
	Process        *Process                     `json:"process,omitempty"`         // scalelab's own CPU and memory
	Telemetry      *Telemetry                   `json:"telemetry,omitempty"`
	Live           *Live                        `json:"live,omitempty"`     // where the live figures went (--metrics-listen, --metrics-push)       // every tier's processes and engine stats (telemetry.go)
	Faults         []Fault                      `json:"faults,omitempty"`   // --fault: what was injected when
	Events         []Event                      `json:"events,omitempty"`   // node and cluster health events (faults.go)
	Recovery       *Recovery                    `json:"recovery,omitempty"` // time until healthy after the faults
	Audit          *Audit                       `json:"audit,omitempty"`    // acknowledged-write audit (audit.go)
	Files          []string                     `json:"files"`
}

// Concurrency is the run's real concurrency: the operations in flight
// over the measured window (their mean, exact from the time each spent in
// flight, and the most at once), beside the users the load model ran;
// concurrency.csv has them per interval. A merged run's mean is the sum of
// its segments' means and its max the sum of their per-interval maxima
// (an upper bound: the segments' peaks need not coincide).
type Concurrency struct {
	MeanInFlight float64 `json:"mean_in_flight"`
	MaxInFlight  int64   `json:"max_in_flight"`
	Users        int     `json:"users,omitempty"` // the load model's users
	MaxIsBound   bool    `json:"max_is_upper_bound,omitempty"`
}

// ClientQueue is the bound on operations at once that the workload's
// client has (its pool to the store, or to the app tier): at most Slots
// ran at once and at most MaxWaiting waited for a slot, each started on
// schedule and its wait counted in its latency. InProcess: the store runs
// in scalelab's process, and Slots was lowered to leave the generator a
// processor (docs/load-models.md). A merged run's figures are the sums
// of its segments' (each segment's client has slots of its own); its
// MaxWaiting is then an upper bound, MaxIsBound (the segments' peaks
// need not coincide).
type ClientQueue struct {
	Slots      int  `json:"slots"`
	MaxWaiting int  `json:"max_waiting"`
	InProcess  bool `json:"in_process,omitempty"`
	MaxIsBound bool `json:"max_is_upper_bound,omitempty"`
}

// Text says it in a line.
func (q *ClientQueue) Text() string {
	where := "the client's connections"
	if q.InProcess {
		where = "statements of the store in this process"
	}
	ops := "operations"
	if q.Slots == 1 {
		ops = "operation"
	}
	waited := fmt.Sprintf("up to %d", q.MaxWaiting)
	if q.MaxIsBound {
		waited += " (at most: the sum of the segments' peaks)"
	}
	return fmt.Sprintf("at most %d %s at once (%s); %s waited for a slot, started on schedule, the wait in their latency", q.Slots, ops, where, waited)
}

// ClusterRef names the local cluster a run used.
type ClusterRef struct {
	Name   string            `json:"name"`
	Nodes  int               `json:"nodes"`
	Params map[string]string `json:"params,omitempty"`
}

// Version identifies the scalelab build.
type Version struct {
	Version string `json:"version"`
	Go      string `json:"go"`
}

// Tier is a connection of the run beside the store (the store is Engine,
// Cluster and Server): its role, engine, cluster, server (version, target
// without secrets) and resolved settings.
type Tier struct {
	Role     string            `json:"role"`
	Engine   string            `json:"engine"`
	Cluster  *ClusterRef       `json:"cluster,omitempty"`
	Server   *Server           `json:"server,omitempty"`
	Settings map[string]string `json:"settings"`
	Changed  []string          `json:"changed_settings"`
	// App describes the app tier (role "app"): servers, balancer and the
	// requests each server got.
	App *AppTier `json:"app,omitempty"`
	// Stats are what the tier's server said about itself right before the
	// load started and right after it ended (engines with
	// engine.StatsSampler: a cache's hits, misses, evictions, memory).
	Stats *TierStats `json:"stats,omitempty"`
}

// TierStats are a tier's server statistics sampled right before the load
// started and right after it ended, warm-up included, by name
// ("redis.keyspace_hits", "memcached.evictions", ...): counters are
// cumulative since the server started, gauges are values at that moment.
// A sample that failed is missing (run.json's warnings say why).
type TierStats struct {
	Before map[string]float64 `json:"before,omitempty"`
	After  map[string]float64 `json:"after,omitempty"`
	// Delta is After minus Before for every name in both: what a counter
	// counted during the load, how much a gauge grew.
	Delta map[string]float64 `json:"delta,omitempty"`
}

// NewTierStats pairs the samples taken before and after the load (either
// may be nil: a failed sample) and computes their differences. Values
// that are not finite numbers are left out (JSON has no NaN). It returns
// nil when neither sample holds anything.
func NewTierStats(before, after map[string]float64) *TierStats {
	before, after = finite(before), finite(after)
	if before == nil && after == nil {
		return nil
	}
	ts := &TierStats{Before: before, After: after}
	for k, a := range after {
		if b, ok := before[k]; ok {
			if ts.Delta == nil {
				ts.Delta = map[string]float64{}
			}
			ts.Delta[k] = a - b
		}
	}
	return ts
}

// finite copies m without its NaN and infinite values; nil when nothing
// is left.
func finite(m map[string]float64) map[string]float64 {
	var out map[string]float64
	for k, v := range m {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if out == nil {
			out = make(map[string]float64, len(m))
		}
		out[k] = v
	}
	return out
}

// Server describes the store that was measured.
type Server struct {
	Version string            `json:"version"`
	Target  string            `json:"target"`
	Extra   map[string]string `json:"extra,omitempty"`
	// Product names the server measured when the engine's name does not
	// (FerretDB behind the mongodb engine).
	Product string `json:"product,omitempty"`
	// After holds facts measured once the run ended (requests per
	// router, data distribution).
	After map[string]string `json:"after,omitempty"`
}

// Load describes the load model and its parameters.
type Load struct {
	Model     string         `json:"model"`
	Open      bool           `json:"open"` // an open model: latency from the intended start
	Params    map[string]any `json:"params"`
	DurationS float64        `json:"duration_s,omitempty"`
	WarmupS   float64        `json:"warmup_s"`
	Ops       int64          `json:"ops,omitempty"`
	Seed      uint64         `json:"seed"`
}

// Host describes the machine scalelab ran on.
type Host struct {
	Hostname   string `json:"hostname"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPUs       int    `json:"cpus"`
	GoMaxProcs int    `json:"gomaxprocs"`
	MemBytes   uint64 `json:"mem_bytes,omitempty"`
	Kernel     string `json:"kernel,omitempty"`
	CPUModel   string `json:"cpu_model,omitempty"`
}

// LoadPhase reports the data load that preceded the measured run.
type LoadPhase struct {
	Items   int64   `json:"items"`
	Seconds float64 `json:"seconds"`
	PerS    float64 `json:"per_s"`
	Skipped bool    `json:"skipped,omitempty"`
}

// Totals sums every operation.
type Totals struct {
	Started        int64   `json:"started"`
	Count          int64   `json:"count"`
	Errors         int64   `json:"errors"`
	InFlight       int64   `json:"in_flight"`
	ThroughputPerS float64 `json:"throughput_per_s"`
	ErrorRate      float64 `json:"error_rate"`
}

// Sum computes totals over the summaries, leaving out composite operations
// (their operations are counted on their own).
func Sum(s map[string]metrics.OpSummary) *Totals {
	t := &Totals{}
	for _, o := range s {
		if o.Composite != "" {
			continue // its operations are counted
		}
		t.Started += o.Started
		t.Count += o.Count
		t.Errors += o.Errors
		t.InFlight += o.InFlight
		t.ThroughputPerS += o.ThroughputPerS
	}
	if done := t.Count + t.Errors; done > 0 {
		t.ErrorRate = float64(t.Errors) / float64(done)
	}
	return t
}

// Create makes a new results directory. An existing non-empty directory is
// an error: results are never overwritten.
func Create(dir string) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("results directory %s already exists and is not empty; choose another --out", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create results directory: %w", err)
	}
	return nil
}

// CreateUnique makes a new results directory named base, or base-2, base-3,
// ... when that name is taken (two runs started in the same second), and
// returns the name it made. Each candidate is created with an exclusive
// mkdir, so concurrent processes never share a directory.
func CreateUnique(base string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return "", fmt.Errorf("create results directory: %w", err)
	}
	dir := base
	for i := 2; ; i++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) || i > 1000 {
			return "", fmt.Errorf("create results directory: %w", err)
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}

// WriteJSON writes v as indented JSON to path atomically: a temp file in the
// same directory, fsync, rename, fsync of the directory.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return WriteFileAtomic(path, append(b, '\n'))
}

// WriteFileAtomic writes data to path so that a reader sees the old file or
// the new one, never a torn one.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		// name the file asked for, not the temp file beside it
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	cleanup := func(e error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, e)
	}
	if _, err := f.Write(data); err != nil {
		return cleanup(err)
	}
	if err := f.Sync(); err != nil {
		return cleanup(err)
	}
	if err := f.Close(); err != nil {
		return cleanup(err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return cleanup(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return cleanup(err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// Read loads run.json from a results directory.
func Read(dir string) (*Run, error) {
	var r Run
	if err := readJSON(dir, RunFile, "a results directory", &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// readJSON decodes dir's file into v; a missing file is said to mean
// that dir is not what (e.g. "a results directory"). The file must carry
// scalelab's own fields (ident): the version block every scalelab writes,
// so that another tool's run.json is refused rather than read as an
// empty run.
func readJSON(dir, file, what string, v any, ident ...string) error {
	path := filepath.Join(dir, file)
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s is not %s: no %s", dir, what, file)
		}
		return fmt.Errorf("read %s: %w", file, err)
	}
	// a damaged or foreign file is the user's input, not a bug
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return WithCode(ExitUsage, fmt.Errorf("%s is not a valid %s: %w", path, file, err))
	}
	if err := identify(top, ident); err != nil {
		return WithCode(ExitUsage, fmt.Errorf("%s is not a scalelab results file (%w)", path, err))
	}
	if err := json.Unmarshal(b, v); err != nil {
		return WithCode(ExitUsage, fmt.Errorf("%s is not a valid %s: %w", path, file, err))
	}
	return nil
}

// identify checks that a results file's top-level object holds scalelab's
// version block ({"version": ..., "go": ...}) and the other fields ident
// names.
func identify(top map[string]json.RawMessage, ident []string) error {
	var ver map[string]json.RawMessage
	if raw, ok := top["scalelab"]; !ok || json.Unmarshal(raw, &ver) != nil || ver == nil {
		return errors.New(`no "scalelab" version block`)
	}
	if _, ok := ver["version"]; !ok {
		return errors.New(`its "scalelab" block has no "version"`)
	}
	for _, k := range ident {
		if _, ok := top[k]; !ok {
			return fmt.Errorf("no %q field", k)
		}
	}
	return nil
}
