package promsource

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlan(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "observe.yaml")
	if err := os.WriteFile(file, []byte(`prometheus: http://prom:9090/
tiers:
  store: {cpu: 'namedprocess_namegroup_cpu_seconds_total{groupname="pg"}', exporter: '{job="postgres"}', cpus: 0.5}
  app: {cpu: 'instance=~"web.*:9100"'}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Plan("", []string{file, `cache=process_cpu_seconds_total{job="redis"}`, "cache.cpus=1"})
	if err != nil {
		t.Fatal(err)
	}
	if m.URL != "http://prom:9090" || len(m.Tiers) != 3 {
		t.Fatalf("mapping %+v", m)
	}
	st, app, cache := m.Tier("store"), m.Tier("app"), m.Tier("cache")
	if st.CPU.String() != `namedprocess_namegroup_cpu_seconds_total{groupname="pg"}` || st.Exporter.Labels() != `job="postgres"` || st.CPUs != 0.5 {
		t.Errorf("store %+v", st)
	}
	if app.CPU.Metric != DefaultCPUMetric || app.CPU.Labels() != `instance=~"web.*:9100"` {
		t.Errorf("app %+v", app.CPU)
	}
	if cache.CPUs != 1 || cache.Given["cache"] != `process_cpu_seconds_total{job="redis"}` || !m.Observes("cache") || m.Observes("balancer") {
		t.Errorf("cache %+v", cache)
	}
	// --telemetry-source wins over the file's server only when given after
	m, err = Plan("prometheus=https://p.example:9090", []string{`store=job="node"`})
	if err != nil || m.URL != "https://p.example:9090" {
		t.Errorf("%+v %v", m, err)
	}
}

func TestPlanErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("prometheus: http://p:9090\ntiers:\n  store: {cpux: 'job=\"a\"'}\n"), 0o644)
	tab := filepath.Join(dir, "tab.yaml")
	os.WriteFile(tab, []byte("prometheus: http://p:9090\ntiers:\n\tstore: {cpu: 'job=\"a\"'}\n"), 0o644)
	tok := filepath.Join(dir, "token")
	os.WriteFile(tok, []byte("secret-value\n"), 0o644)
	for _, c := range []struct {
		source  string
		observe []string
		env     string
		want    string
	}{
		{"prometheus=ftp://p", []string{`store=job="a"`}, "", "not an http(s) URL"},
		{"prometheus=http://u:secret-value@p:9090", nil, "", "holds credentials"},
		{"prometheus=http://p:9090", []string{"store"}, "", "want TIER=SELECTOR"},
		{"prometheus=http://p:9090", []string{`db=job="a"`}, "", `unknown tier "db"`},
		{"prometheus=http://p:9090", []string{"store.cpus=-1"}, "", "above 0"},
		{"prometheus=http://p:9090", []string{"store.cpus=1"}, "", "has cpus but no series"},
		{"", []string{bad}, "", "field cpux not found"},
		{"", []string{tab}, "", tab + ":3:1: a tab character; YAML indents with spaces only"},
		{"prometheus=http://p:9090", []string{filepath.Join(dir, "missing.yaml")}, "", "no such file"},
		{"prometheus=http://p:9090", []string{`store=job="a"`}, tok, "readable by others"},
	} {
		if c.env != "" {
			t.Setenv(TokenFileEnv, c.env)
		}
		_, err := Plan(c.source, c.observe)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want %q", c.source, c.observe, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret-value") {
			t.Errorf("error shows the secret: %v", err)
		}
	}
	os.Chmod(tok, 0o600)
	t.Setenv(TokenFileEnv, tok)
	m, err := Plan("prometheus=http://p:9090", []string{`store=job="a"`})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := m.token(); got != "secret-value" || err != nil {
		t.Errorf("token %q %v", got, err)
	}
	t.Setenv(TokenEnv, "from-env")
	if got, _ := m.token(); got != "from-env" {
		t.Errorf("token %q, want the environment's", got)
	}
}

func FuzzParseObserve(f *testing.F) {
	for _, s := range []string{`store=job="a"`, "app.cpus=0.5", `cache.exporter={job="redis"}`, "x=y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if strings.HasSuffix(in, ".yaml") || strings.HasSuffix(in, ".yml") {
			return
		}
		m := &Mapping{}
		if err := ParseObserve(m, []string{in}); err != nil {
			return
		}
		for _, tier := range m.Tiers {
			if !contains(Tiers, tier.Name) {
				t.Fatalf("%q gave tier %q", in, tier.Name)
			}
		}
	})
}
