// Package layers writes down the layers of scalelab's packages, lowest
// first, as docs/ARCHITECTURE.md ("Layers: the dependency rule") draws
// them: a package may import packages of its own layer and of the layers
// below, never one above. Its test checks every package of the module
// against the table from `go list -deps -json` output.
package layers

import "strings"

// Layer is a named group of packages (paths relative to the module; a
// path ending in "/..." names a package and every package under it).
type Layer struct {
	Name     string
	Packages []string
}

// Table is the layers, lowest first.
var Table = []Layer{
	{"foundation", []string{"setting", "metrics", "segment", "registry", "results", "results/resultstest", "slo", "audit", "report", "merge",
		"internal/testenv", "internal/testproc", "internal/layers", "internal/codeshape", "internal/interrupt", "lru", "wait", "bindcheck", "termtable",
		"studies", "examples", "yamlerr"}},
	{"machinery", []string{"cluster/...", "fault", "kube"}},
	{"engine", []string{"engine/..."}},
	{"stack", []string{"stack/..."}},
	{"tier", []string{"cache", "app", "httpload", "apptier"}},
	{"scenario", []string{"scenario/..."}},
	{"load", []string{"load"}},
	{"run", []string{"runner", "telemetry", "promsource/...", "liveexport"}},
	{"experiment", []string{"experiment/..."}},
	{"study", []string{"study"}},
	{"command line", []string{"cli", "cmd/..."}},
}

// EngineShared are the folders under engine/ that are no engine of their
// own: what every engine's code and tests share. Every other folder under
// engine/ is one engine (with its subpackages), which imports no other.
var EngineShared = []string{"netdial", "recordstest", "kvtest", "enginetest"}

// EngineOf returns the engine whose folder holds pkg (engine/postgres/pgtest:
// postgres), or "" for a package of no single engine.
func EngineOf(pkg string) string {
	rest, ok := strings.CutPrefix(pkg, "engine/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	for _, s := range EngineShared {
		if name == s {
			return ""
		}
	}
	return name
}

// Of returns the index in Table of the layer of pkg (a path relative to
// the module), or -1 when no layer names it. A package named exactly
// wins over a "/..." pattern.
func Of(pkg string) int {
	best, bestLen := -1, -1
	for i, l := range Table {
		for _, p := range l.Packages {
			n, ok := match(p, pkg)
			if ok && n > bestLen {
				best, bestLen = i, n
			}
		}
	}
	return best
}

// match reports whether pattern names pkg, and how specific it is (the
// length of the part it names exactly; an exact name beats a tree).
func match(pattern, pkg string) (int, bool) {
	if root, ok := strings.CutSuffix(pattern, "/..."); ok {
		if pkg == root || strings.HasPrefix(pkg, root+"/") {
			return len(root), true
		}
		return 0, false
	}
	return len(pattern) + 1, pattern == pkg
}
