package results

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestCreateUnique(t *testing.T) {
	base := filepath.Join(t.TempDir(), "scalelab-results", "ycsb-sqlite-20261121-120000")
	// Concurrent runs started in the same second each get their own directory.
	const n = 8
	got := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := CreateUnique(base)
			if err != nil {
				t.Errorf("CreateUnique: %v", err)
			}
			got[i] = d
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, d := range got {
		if seen[d] {
			t.Fatalf("directory %s handed out twice: %v", d, got)
		}
		seen[d] = true
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			t.Fatalf("%s not created: %v", d, err)
		}
	}
	if !seen[base] || !seen[base+"-2"] || !seen[base+"-"+"8"] {
		t.Fatalf("names %v, want %s and suffixes -2 to -8", got, base)
	}
}

func TestCreateRefusesNonEmpty(t *testing.T) {
	dir := t.TempDir()
	if err := Create(dir); err != nil {
		t.Fatalf("empty directory: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, RunFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Create(dir); err == nil {
		t.Fatal("Create of a non-empty directory succeeded; results must never be overwritten")
	}
}
