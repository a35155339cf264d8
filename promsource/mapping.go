// Package promsource reads the figures of a run's tiers from a Prometheus
// server (node_exporter, process exporters, an app's own
// process_cpu_seconds_total, the engines' exporters) over the run's
// window, for the telemetry of tiers scalelab did not start: the mapping
// of tiers to series (mapping.go), the queries (query.go).
package promsource

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/setting"
	"github.com/scalelab/scalelab/yamlerr"
)

// Tiers a mapping may name: those a run's verdict speaks of.
var Tiers = []string{"store", "app", "cache", "balancer"}

// DefaultCPUMetric is the series a selector without a metric name reads:
// node_exporter's per-CPU seconds, whose non-idle rate is the machine's
// busy cores.
const DefaultCPUMetric = "node_cpu_seconds_total"

// TokenEnv holds a bearer token for the Prometheus server; TokenFileEnv
// names a file (mode 0600) holding one.
const (
	TokenEnv     = "SCALELAB_PROMETHEUS_TOKEN"
	TokenFileEnv = "SCALELAB_PROMETHEUS_TOKEN_FILE"
)

// Tier says where one tier's figures are.
type Tier struct {
	Name string
	// CPU selects the series of the tier's CPU seconds (a metric name
	// and labels; DefaultCPUMetric when it names none): each distinct
	// instance (and job or process group) is a node.
	CPU *Selector
	// Exporter selects the engine exporter's series of the tier's server
	// (postgres_exporter, redis_exporter, HAProxy's endpoint).
	Exporter *Selector
	// CPUs is each node's CPU limit when the series do not say it.
	CPUs float64
	// Given is what the user wrote, per key (for run.json).
	Given map[string]string
}

// Mapping is a Prometheus server and the tiers it observes.
type Mapping struct {
	URL       string
	TokenFile string // from the YAML file or TokenFileEnv
	Tiers     []*Tier
}

// ParseSource reads --telemetry-source: prometheus=URL.
func ParseSource(s string) (string, error) {
	kind, u, ok := strings.Cut(s, "=")
	if !ok || kind != "prometheus" {
		return "", fmt.Errorf("--telemetry-source %q: want prometheus=URL (the only source so far), e.g. prometheus=http://127.0.0.1:9090", redactURL(s))
	}
	return checkURL(u)
}

func checkURL(u string) (string, error) {
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
		return "", fmt.Errorf("--telemetry-source: %q is not an http(s) URL of a Prometheus server, e.g. http://127.0.0.1:9090", redactURL(u))
	}
	if pu.User != nil {
		return "", fmt.Errorf("--telemetry-source: the URL holds credentials; give a bearer token in %s or a 0600 file named by %s (never on the command line)", TokenEnv, TokenFileEnv)
	}
	return strings.TrimRight(u, "/"), nil
}

// redactURL hides a URL's user information.
func redactURL(s string) string {
	if pu, err := url.Parse(s); err == nil && pu.User != nil {
		pu.User = url.User("REDACTED")
		return pu.String()
	}
	if i := strings.Index(s, "@"); i >= 0 {
		return "REDACTED" + s[i:]
	}
	return s
}

// ParseObserve reads the --observe values into m: TIER=SELECTOR (the
// tier's CPU series), TIER.exporter=SELECTOR, TIER.cpus=N, or the path of
// a YAML file (.yaml or .yml) holding a mapping.
func ParseObserve(m *Mapping, values []string) error {
	for _, v := range values {
		if !strings.Contains(v, "=") && (strings.HasSuffix(v, ".yaml") || strings.HasSuffix(v, ".yml")) {
			if err := loadFile(m, v); err != nil {
				return err
			}
			continue
		}
		key, val, ok := strings.Cut(v, "=")
		if !ok {
			return fmt.Errorf("--observe %q: want TIER=SELECTOR (e.g. app=instance=~\"web.*:9100\"), TIER.exporter=SELECTOR, TIER.cpus=N, or a mapping file ending in .yaml", v)
		}
		name, field, _ := strings.Cut(strings.TrimSpace(key), ".")
		if err := m.set(name, field, val); err != nil {
			return fmt.Errorf("--observe %s: %w", v, err)
		}
	}
	return nil
}

// set applies one key of a tier's mapping.
func (m *Mapping) set(name, field, val string) error {
	if !contains(Tiers, name) {
		hint := ""
		if n := setting.Nearest(name, Tiers); n != "" {
			hint = fmt.Sprintf("; did you mean %s?", n)
		}
		return fmt.Errorf("unknown tier %q (allowed: %s)%s", name, strings.Join(Tiers, ", "), hint)
	}
	t := m.tier(name)
	switch field {
	case "", "cpu":
		s, err := ParseSelector(val)
		if err != nil {
			return err
		}
		if s.Metric == "" {
			s.Metric = DefaultCPUMetric
		}
		t.CPU = &s
	case "exporter":
		s, err := ParseSelector(val)
		if err != nil {
			return err
		}
		t.Exporter = &s
	case "cpus":
		f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || f <= 0 || f > 4096 {
			return fmt.Errorf("cpus %q: want a number of cores above 0, e.g. 0.5", val)
		}
		t.CPUs = f
	default:
		fields := []string{"cpu", "exporter", "cpus"}
		hint := ""
		if n := setting.Nearest(field, fields); n != "" {
			hint = fmt.Sprintf("; did you mean %s?", n)
		}
		return fmt.Errorf("unknown key %q of tier %s (allowed: %s)%s", field, name, strings.Join(fields, ", "), hint)
	}
	if t.Given == nil {
		t.Given = map[string]string{}
	}
	k := name
	if field != "" && field != "cpu" {
		k += "." + field
	}
	t.Given[k] = strings.TrimSpace(val)
	return nil
}

func (m *Mapping) tier(name string) *Tier {
	for _, t := range m.Tiers {
		if t.Name == name {
			return t
		}
	}
	t := &Tier{Name: name}
	m.Tiers = append(m.Tiers, t)
	return t
}

// Tier returns the mapping of a tier, or nil.
func (m *Mapping) Tier(name string) *Tier {
	for _, t := range m.Tiers {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// fileMapping is the YAML form of a mapping.
type fileMapping struct {
	Prometheus string `yaml:"prometheus"`
	TokenFile  string `yaml:"token_file"`
	Tiers      map[string]struct {
		CPU      string  `yaml:"cpu"`
		Exporter string  `yaml:"exporter"`
		CPUs     float64 `yaml:"cpus"`
	} `yaml:"tiers"`
}

// loadFile reads a YAML mapping:
//
//	prometheus: http://127.0.0.1:9090   # or --telemetry-source
//	token_file: prometheus.token         # optional, mode 0600
//	tiers:
//	  store: {cpu: 'namedprocess_namegroup_cpu_seconds_total{groupname="postgres"}', exporter: '{job="postgres"}', cpus: 0.5}
//	  app: {cpu: 'process_cpu_seconds_total{job="web"}'}
func loadFile(m *Mapping, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--observe %s: %w", path, err)
	}
	var f fileMapping
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if te := yamlerr.Tab(path, b, err); te != nil {
			return fmt.Errorf("--observe %w", te)
		}
		return fmt.Errorf("--observe %s: %v (allowed keys: prometheus, token_file, tiers: TIER: cpu, exporter, cpus)", path, err)
	}
	if f.Prometheus != "" {
		u, err := checkURL(f.Prometheus)
		if err != nil {
			return fmt.Errorf("--observe %s: prometheus: %w", path, err)
		}
		m.URL = u
	}
	m.TokenFile = f.TokenFile
	names := slices.Sorted(maps.Keys(f.Tiers))
	for _, n := range names {
		t := f.Tiers[n]
		for _, kv := range [][2]string{{"cpu", t.CPU}, {"exporter", t.Exporter}} {
			if kv[1] != "" {
				if err := m.set(n, kv[0], kv[1]); err != nil {
					return fmt.Errorf("--observe %s: tiers.%s.%s: %w", path, n, kv[0], err)
				}
			}
		}
		if t.CPUs != 0 {
			if err := m.set(n, "cpus", strconv.FormatFloat(t.CPUs, 'g', -1, 64)); err != nil {
				return fmt.Errorf("--observe %s: tiers.%s: %w", path, n, err)
			}
		}
	}
	return nil
}

// Plan reads --telemetry-source and --observe into a mapping; nil when
// neither is given. Every error is bad input.
func Plan(source string, observe []string) (*Mapping, error) {
	if source == "" && len(observe) == 0 {
		return nil, nil
	}
	m := &Mapping{}
	if source != "" {
		u, err := ParseSource(source)
		if err != nil {
			return nil, err
		}
		m.URL = u
	}
	if err := ParseObserve(m, observe); err != nil {
		return nil, err
	}
	if m.URL == "" {
		return nil, errors.New("--observe needs a Prometheus server: --telemetry-source prometheus=URL (or prometheus: URL in the mapping file)")
	}
	if len(m.Tiers) == 0 {
		return nil, fmt.Errorf("--telemetry-source %s: no tier mapped; add --observe TIER=SELECTOR (tiers: %s), e.g. --observe store=instance=\"db1:9100\"", m.URL, strings.Join(Tiers, ", "))
	}
	for _, t := range m.Tiers {
		if t.CPU == nil && t.Exporter == nil {
			return nil, fmt.Errorf("--observe: tier %s has cpus but no series; add --observe %s=SELECTOR", t.Name, t.Name)
		}
	}
	if _, err := m.token(); err != nil {
		return nil, err
	}
	return m, nil
}

// token is the bearer token: TokenEnv, else the file (TokenFileEnv or
// the mapping's token_file), which must not be readable by others.
func (m *Mapping) token() (string, error) {
	if t := os.Getenv(TokenEnv); t != "" {
		return strings.TrimSpace(t), nil
	}
	path := os.Getenv(TokenFileEnv)
	if path == "" {
		path = m.TokenFile
	}
	if path == "" {
		return "", nil
	}
	t, err := cluster.ReadSecret(path)
	if err != nil {
		return "", fmt.Errorf("prometheus token file: %w", err)
	}
	return t, nil
}

// Observes reports whether the mapping names the tier.
func (m *Mapping) Observes(tier string) bool { return m != nil && m.Tier(tier) != nil }

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
