package layers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pkg is what the check reads of one package in `go list -json`.
type pkg struct {
	ImportPath string
	Module     *struct{ Path string }
	Imports    []string // the package's own imports (not its tests')
	Deps       []string
}

// list runs `go list -deps -json ./...` at the module's root and returns
// the module's own packages, by path relative to the module.
func list(t *testing.T) (map[string]pkg, string) {
	t.Helper()
	statSources(t, "../..")
	cmd := exec.Command("go", "list", "-deps", "-json", "./...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.String())
	}
	pkgs := map[string]pkg{}
	module := ""
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("read go list's output: %v", err)
		}
		if p.Module == nil || !strings.HasPrefix(p.ImportPath, p.Module.Path) {
			continue // the standard library, other modules
		}
		if module == "" && p.ImportPath == p.Module.Path+"/internal/layers" {
			module = p.Module.Path
		}
		pkgs[p.ImportPath] = p
	}
	if module == "" {
		t.Fatal("go list did not list internal/layers: run from the module")
	}
	rel := map[string]pkg{}
	for path, p := range pkgs {
		if r, ok := strings.CutPrefix(path, module+"/"); ok {
			rel[r] = p
		}
	}
	return rel, module
}

// statSources stats every Go file under root, so that go test's cache
// knows the result depends on them (go list, a child process, reads
// them unseen by it).
func statSources(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatalf("walk the module: %v", err)
	}
}

// violations lists every import of pkgs from a higher layer, and every
// package of the module that no layer names.
func violations(pkgs map[string]pkg, module string) []string {
	var bad []string
	for path, p := range pkgs {
		l := Of(path)
		if l < 0 {
			bad = append(bad, fmt.Sprintf("%s is in no layer: add it to layers.Table and docs/ARCHITECTURE.md", path))
			continue
		}
		for _, imp := range p.Imports {
			r, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			if li := Of(r); li > l {
				bad = append(bad, fmt.Sprintf("%s (layer %s) imports %s (layer %s, higher)", path, Table[l].Name, r, Table[li].Name))
			}
			if e, o := EngineOf(path), EngineOf(r); e != "" && o != "" && e != o {
				bad = append(bad, fmt.Sprintf("%s (engine %s) imports %s (engine %s): no engine imports another", path, e, r, o))
			}
		}
	}
	return bad
}

// TestLayers: no package of the module imports one of a higher layer, and
// every package is in a layer.
func TestLayers(t *testing.T) {
	pkgs, module := list(t)
	if len(pkgs) < 30 {
		t.Fatalf("go list gave %d of the module's packages; want them all", len(pkgs))
	}
	for _, b := range violations(pkgs, module) {
		t.Error(b)
	}
	// The two facts the layers exist for, stated on their own.
	for path, p := range pkgs {
		if Of(path) > Of("engine") {
			continue
		}
		for _, d := range p.Deps {
			if d == module+"/scenario" || strings.HasPrefix(d, module+"/scenario/") {
				t.Errorf("%s depends on %s: an engine or a lower layer knows a scenario", path, d)
			}
		}
	}
	for _, d := range pkgs["cache"].Deps {
		if d == module+"/scenario" || strings.HasPrefix(d, module+"/scenario/") {
			t.Errorf("cache depends on %s", d)
		}
	}
}

// TestViolationsFound: the check finds an import upward and a package in
// no layer, so that TestLayers can fail.
func TestViolationsFound(t *testing.T) {
	const m = "example.com/m"
	pkgs := map[string]pkg{
		"engine/memory":         {Imports: []string{m + "/cache", m + "/setting", "fmt"}},
		"cache":                 {Imports: []string{m + "/engine"}},
		"newthing":              {},
		"engine/mongodb":        {Imports: []string{m + "/engine/postgres", m + "/engine/netdial"}},
		"engine/enginetest/all": {Imports: []string{m + "/engine/postgres"}},
	}
	bad := violations(pkgs, m)
	if len(bad) != 3 {
		t.Fatalf("want 2 violations, got %q", bad)
	}
	joined := strings.Join(bad, "\n")
	for _, want := range []string{"engine/memory (layer engine) imports cache (layer tier, higher)", "newthing is in no layer",
		"engine/mongodb (engine mongodb) imports engine/postgres (engine postgres): no engine imports another"} {
		if !strings.Contains(joined, want) {
			t.Errorf("violations %q lack %q", bad, want)
		}
	}
}

func TestOf(t *testing.T) {
	for _, c := range []struct {
		pkg  string
		want string
	}{{"lru", "foundation"}, {"cache", "tier"}, {"engine/memory", "engine"}, {"scenario/ycsb", "scenario"},
		{"cluster/jvm", "machinery"}, {"cluster/cgroup", "machinery"}, {"cluster/netns", "machinery"},
		{"cluster/linkemu", "machinery"}, {"cluster/sysuser", "machinery"}, {"cluster/clustertest", "machinery"}, {"cli", "command line"}, {"cmd/scalelab", "command line"}} {
		if l := Of(c.pkg); l < 0 || Table[l].Name != c.want {
			t.Errorf("Of(%s) = %d, want layer %s", c.pkg, l, c.want)
		}
	}
	if l := Of("nowhere"); l != -1 {
		t.Errorf("Of(nowhere) = %d, want -1", l)
	}
}
