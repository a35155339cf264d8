package results

// TelemetryFile is the per-second CPU, memory and I/O of every sampled
// process, streamed during the run; EngineStatsFile is what the servers
// said about themselves every few seconds.
const (
	TelemetryFile   = "telemetry.csv"
	EngineStatsFile = "engine_stats.csv"
)

// Limits are the CPU, memory and CPU-set limits a node ran under.
type Limits struct {
	CPUs        float64 `json:"cpus,omitempty"`
	MemoryBytes int64   `json:"memory_bytes,omitempty"`
	CPUSet      string  `json:"cpuset,omitempty"`
	Cgroup      string  `json:"cgroup,omitempty"` // "v1" or "v2"
}

// Telemetry summarises the resource use of every process of the run's
// tiers that scalelab started, of scalelab itself and of the host, over
// the measured window, and what the engines reported about themselves.
type Telemetry struct {
	IntervalS   float64 `json:"interval_s"`
	Samples     int     `json:"samples"` // sampling ticks in the measured window
	HostCPUs    int     `json:"host_cpus"`
	HostCPUMean float64 `json:"host_cpu_mean_cores"` // every process of the machine
	HostCPUMax  float64 `json:"host_cpu_max_cores"`
	// OtherCPUMean is, when the host's CPUs were busy, what processes
	// outside the run's sampled tiers used of them.
	OtherCPUMean float64 `json:"other_cpu_mean_cores,omitempty"`
	// Unobserved are the tiers the run used that nothing observed (a
	// --target or --app that no --telemetry-source maps): the verdict
	// cannot say whether they saturated.
	Unobserved []Unobserved `json:"unobserved,omitempty"`
	// Sources are the external systems the tiers were observed through
	// (a Prometheus server), with what each mapped and warned.
	Sources []TelemetrySource `json:"sources,omitempty"`
	Nodes   []NodeUsage       `json:"nodes"`
	Tiers   []TierUsage       `json:"tiers"`
	// NoSamples are the tiers observed (a process, a Prometheus series)
	// without a single sample in the measured window (a run shorter than
	// the sampling or scrape interval): they are in neither Nodes nor
	// Tiers, whose zeros would read as measured.
	NoSamples    []string     `json:"no_samples,omitempty"`
	Cost         *Cost        `json:"cost,omitempty"`
	EngineStats  []EngineStat `json:"engine_stats,omitempty"` // those that moved most, and every rejection or drop
	EngineErrors []string     `json:"engine_stat_errors,omitempty"`
	Errors       []string     `json:"errors,omitempty"`
	Saturation   string       `json:"saturation"`
	Saturated    *Saturated   `json:"saturated,omitempty"`
	// Phases judges each phase of a phases-model run on its own: where the
	// whole run's verdict averages a ramp, these say from which rate a
	// tier was at its limit.
	Phases []WindowSaturation `json:"phases,omitempty"`
}

// WindowSaturation is the saturation verdict of one stretch of the run
// (a load phase), from the CPU samples in it.
type WindowSaturation struct {
	Window      string     `json:"window"` // the phase, as --phases writes it ("30s@4/s")
	FromS       float64    `json:"from_s"` // seconds since the load began
	ToS         float64    `json:"to_s"`
	Samples     int        `json:"samples"`
	HostCPUMean float64    `json:"host_cpu_mean_cores"`
	Saturation  string     `json:"saturation"`
	Saturated   *Saturated `json:"saturated,omitempty"`
}

// NodeUsage is one sampled process (and its children) over the measured
// window. CPU is in cores: 1.0 is one core busy all the time.
type NodeUsage struct {
	Tier         string  `json:"tier"` // store, cache, app, generator, ...
	Node         string  `json:"node"`
	Role         string  `json:"role,omitempty"`
	PID          int     `json:"pid"`
	Source       string  `json:"source"` // "proc" (the process tree) or "cgroup v1"/"cgroup v2"
	Limits       *Limits `json:"limits,omitempty"`
	CPUMeanCores float64 `json:"cpu_mean_cores"`
	CPUMaxCores  float64 `json:"cpu_max_cores"`
	CPUUserS     float64 `json:"cpu_user_s"`
	CPUSysS      float64 `json:"cpu_sys_s"`
	PeakRSSBytes int64   `json:"peak_rss_bytes"` // cgroup: memory in use; else RSS summed over the tree
	ReadBytes    int64   `json:"read_bytes"`
	WriteBytes   int64   `json:"write_bytes"`
	MaxThreads   int     `json:"max_threads"`
	AtLimitShare float64 `json:"at_limit_share"` // share of samples at >= 90% of its CPU limit (or of the host's CPUs)
	ThrottledS   float64 `json:"throttled_s,omitempty"`
	Missing      int     `json:"missing_samples,omitempty"` // samples where the process was gone (killed, restarting)
	OnThisHost   bool    `json:"on_this_host,omitempty"`    // observed by another system, but a process of this machine
}

// TierUsage sums a tier's nodes.
type TierUsage struct {
	Tier         string  `json:"tier"`
	Nodes        int     `json:"nodes"`
	CPUMeanCores float64 `json:"cpu_mean_cores"`
	CPUMaxCores  float64 `json:"cpu_max_cores"` // the highest per-sample sum over its nodes
	CPUPerOpUs   float64 `json:"cpu_per_op_us"` // CPU time per measured operation
	PeakRSSBytes int64   `json:"peak_rss_bytes"`
}

// Cost is the sampler's own CPU: the price of watching.
type Cost struct {
	CPUS          float64 `json:"cpu_s"`
	PerSampleMs   float64 `json:"per_sample_ms"` // CPU per tick, every node included
	ShareOfCore   float64 `json:"share_of_core"` // CPU / wall: 0.01 is 1 % of one core
	SampledNodes  int     `json:"sampled_processes"`
	EngineSamples int     `json:"engine_samples"`
}

// EngineStat is one figure an engine reported, at the first and last
// sample of the run.
type EngineStat struct {
	Tier  string  `json:"tier"`
	Name  string  `json:"name"`
	First float64 `json:"first"`
	Last  float64 `json:"last"`
	Max   float64 `json:"max"`
}

// Saturated names the node judged to be the limit.
type Saturated struct {
	Tier     string  `json:"tier"`
	Node     string  `json:"node"`
	Resource string  `json:"resource"` // cpu, pool, host
	Share    float64 `json:"share"`    // share of measured samples at the limit
	Limit    float64 `json:"limit_cores,omitempty"`
}

// Unobserved is a tier the run used but could not observe.
type Unobserved struct {
	Tier string `json:"tier"`
	At   string `json:"at,omitempty"` // its address (passwords redacted)
}

// TelemetrySource is an external system the run read its tiers' figures
// from.
type TelemetrySource struct {
	Kind     string            `json:"kind"` // "prometheus"
	URL      string            `json:"url"`
	Observe  map[string]string `json:"observe"` // tier (or tier.exporter) -> selector
	Nodes    int               `json:"nodes"`   // nodes it gave
	Series   int               `json:"series"`  // exporter figures it gave
	Warnings []string          `json:"warnings,omitempty"`
}

// Live says where a run's live figures went.
type Live struct {
	Listen  string `json:"listen,omitempty"` // the address served for scraping
	Scrapes int64  `json:"scrapes,omitempty"`
	Push    string `json:"push,omitempty"` // the remote-write URL
}
