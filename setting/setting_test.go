package setting

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func specs() []Spec {
	return []Spec{
		{Key: "ycsb.workload", Kind: Enum, Default: "a", Allowed: []string{"a", "b", "c", "d", "e", "f"}, Description: "core workload"},
		{Key: "ycsb.records", Kind: Int, Default: "1000", Min: 1, Max: 1e9, Description: "records"},
		{Key: "ycsb.verify", Kind: Bool, Default: "false", Description: "verify"},
		{Key: "memory.error_rate", Kind: Float, Default: "0", Min: 0, Max: 1, Description: "errors"},
		{Key: "memory.latency", Kind: Duration, Default: "0s", Min: 0, Max: 60, Description: "latency"},
		{Key: "sqlite.cache_size", Kind: Size, Default: "64MiB", Min: 0, Max: 1 << 40, Description: "cache"},
		{Key: "sqlite.path", Kind: String, Default: "", Description: "path"},
	}
}

func TestDefaultsAndApply(t *testing.T) {
	t.Parallel()
	s := NewSet(specs()...)
	if s.Get("ycsb.workload").String() != "a" || s.Get("ycsb.records").Int() != 1000 || s.Get("sqlite.cache_size").Int() != 64<<20 {
		t.Fatal("defaults wrong")
	}
	for _, a := range []string{"ycsb.workload=c", "ycsb.records=1_000_000", "ycsb.verify=on", "memory.error_rate=0.25", "memory.latency=2ms", "sqlite.cache_size=1g"} {
		if err := s.Apply(a); err != nil {
			t.Fatalf("Apply(%q): %v", a, err)
		}
	}
	if s.Get("ycsb.workload").String() != "c" || s.Get("ycsb.records").Int() != 1_000_000 || !s.Get("ycsb.verify").Bool() ||
		s.Get("memory.error_rate").Float() != 0.25 || s.Get("memory.latency").Duration() != 2*time.Millisecond || s.Get("sqlite.cache_size").Int() != 1<<30 {
		t.Fatal("applied values wrong")
	}
	if got := strings.Join(s.Changed(), ","); got != "memory.error_rate,memory.latency,sqlite.cache_size,ycsb.records,ycsb.verify,ycsb.workload" {
		t.Fatalf("Changed = %s", got)
	}
}

func TestErrorsNameKeyValueAllowedAndNearest(t *testing.T) {
	t.Parallel()
	s := NewSet(specs()...)
	for _, tc := range []struct {
		in       string
		sentinel error
		wants    []string
	}{
		{"ycsb.workloud=c", ErrUnknownKey, []string{`"ycsb.workloud"`, `did you mean "ycsb.workload"`}},
		{"ycsb.workload=g", ErrBadValue, []string{"ycsb.workload", `"g"`, "a|b|c|d|e|f"}},
		{"ycsb.workload=A", ErrBadValue, []string{`did you mean "a"`}},
		{"ycsb.records=0", ErrBadValue, []string{"out of range", "[1, 1000000000]"}},
		{"ycsb.records=ten", ErrBadValue, []string{"not an integer"}},
		{"memory.error_rate=2", ErrBadValue, []string{"out of range"}},
		{"memory.latency=fast", ErrBadValue, []string{"not a duration"}},
		{"ycsb.verify=maybe", ErrBadValue, []string{"true|false"}},
		{"noequals", ErrBadValue, []string{"key=value"}},
		{"workload=c", ErrUnknownKey, []string{`did you mean "ycsb.workload"`}},
	} {
		err := s.Apply(tc.in)
		if !errors.Is(err, tc.sentinel) {
			t.Errorf("Apply(%q) = %v, want %v", tc.in, err, tc.sentinel)
			continue
		}
		for _, w := range tc.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Apply(%q) error %q lacks %q", tc.in, err, w)
			}
		}
	}
}

func TestNearest(t *testing.T) {
	t.Parallel()
	c := []string{"sqlite", "null", "memory", "postgres"}
	for in, want := range map[string]string{"sqlit": "sqlite", "nul": "null", "memroy": "memory", "zzzzzzzz": ""} {
		if got := Nearest(in, c); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseSize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"4096": 4096, "64k": 64 << 10, "16MiB": 16 << 20, "1GB": 1 << 30, "0": 0} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "-1", "1x", "99999999999999999g"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}

func FuzzApply(f *testing.F) {
	for _, s := range []string{"ycsb.workload=c", "ycsb.records=10", "memory.latency=1ms", "sqlite.cache_size=1k", "=", "x", "ycsb.verify=true"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, a string) {
		s := NewSet(specs()...)
		err := s.Apply(a)
		if err != nil {
			if !errors.Is(err, ErrBadValue) && !errors.Is(err, ErrUnknownKey) {
				t.Fatalf("Apply(%q): error without a sentinel: %v", a, err)
			}
			return
		}
		key, raw, _ := strings.Cut(a, "=")
		key = strings.TrimSpace(key)
		if s.Get(key).Raw != raw {
			t.Fatalf("Apply(%q) stored %q", a, s.Get(key).Raw)
		}
		sp, _ := s.Spec(key)
		if _, err := sp.Parse(raw); err != nil {
			t.Fatalf("accepted value does not re-parse: %v", err)
		}
	})
}

// The one rule of "did you mean": a value genuinely close to a known one
// (an edit per three letters, a swap counting as one, or a prefix of at
// least three letters), never merely the least far of short values.
func TestNearestIsClose(t *testing.T) {
	t.Parallel()
	workloads := []string{"a", "b", "c", "d", "e", "f"}
	for _, c := range []struct {
		name       string
		candidates []string
		want       string
	}{
		{"g", workloads, ""},
		{"z", workloads, ""},
		{"B", workloads, "b"},
		{"stric", []string{"strict", "loose", "off"}, "strict"},
		{"strcit", []string{"strict", "loose", "off"}, "strict"},
		{"bars", []string{"auto", "bar", "lines", "off"}, "bar"},
		{"line", []string{"auto", "bar", "lines", "off"}, "lines"},
		{"of", []string{"auto", "bar", "lines", "off"}, "off"},
		{"xyz", []string{"auto", "bar", "lines", "off"}, ""},
		{"ycbs", []string{"ycsb", "social", "logs"}, "ycsb"},
		{"sqlit", []string{"sqlite", "postgres", "null"}, "sqlite"},
		{"ycsb.workloud", []string{"ycsb.workload", "ycsb.records"}, "ycsb.workload"},
		{"workload", []string{"ycsb.workload", "ycsb.records"}, "ycsb.workload"},
		{"poisson", []string{"uniform", "poisson", "exp"}, "poisson"},
		{"posson", []string{"uniform", "poisson", "exp"}, "poisson"},
		{"normal", []string{"uniform", "poisson", "exp"}, ""},
	} {
		if got := Nearest(c.name, c.candidates); got != c.want {
			t.Errorf("Nearest(%q, %v) = %q, want %q", c.name, c.candidates, got, c.want)
		}
	}
}

// An enum value with no near one lists the allowed values without a
// guess; a near one gets it.
func TestEnumSuggestion(t *testing.T) {
	t.Parallel()
	s := Spec{Key: "ycsb.workload", Kind: Enum, Default: "a", Allowed: []string{"a", "b", "c", "d", "e", "f"}}
	_, err := s.Parse("g")
	if err == nil || strings.Contains(err.Error(), "did you mean") || !strings.Contains(err.Error(), "a|b|c|d|e|f") {
		t.Errorf("g: %v", err)
	}
	m := Spec{Key: "x.mode", Kind: Enum, Default: "strict", Allowed: []string{"strict", "loose"}}
	if _, err := m.Parse("stric"); err == nil || !strings.Contains(err.Error(), `did you mean "strict"?`) {
		t.Errorf("stric: %v", err)
	}
}
