package experiment

import (
	"testing"
)

// TestCacheFactor: a factor may vary the cache tier (none or an engine);
// each combination's runs get it as --cache.
func TestCacheFactor(t *testing.T) {
	s, err := Parse("cache.yaml", []byte(`
name: cache
scenario: ycsb
engine: sqlite
factors:
  cache: [none, memory]
`), "")
	if err != nil {
		t.Fatal(err)
	}
	combos, err := s.Matrix()
	if err != nil || len(combos) != 2 {
		t.Fatalf("matrix %v, %v", combos, err)
	}
	none, mem := s.RunOptions(combos[0], 1, "out", ""), s.RunOptions(combos[1], 1, "out", "")
	if len(none.Tiers) != 0 || len(mem.Tiers) != 1 || mem.Tiers[0].Role != "cache" || mem.Tiers[0].Engine != "memory" {
		t.Fatalf("tiers: none %+v, memory %+v", none.Tiers, mem.Tiers)
	}
	if _, err := Parse("bad.yaml", []byte("name: x\nscenario: ycsb\nfactors:\n  cache: [nosuch]\n"), ""); err == nil {
		t.Error("an unknown cache engine was accepted")
	}
}
