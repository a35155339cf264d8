package runner

import (
	"runtime"
	"strconv"
	"testing"
)

// TestShareProcessors: an open model on SQLite runs one statement per
// processor and gives the generator one processor more for the run (and
// back after it); a closed run, or a GOMAXPROCS the user set, keeps
// SQLite's own pool and the processors as they are. Not parallel: the
// processors are the process's.
func TestShareProcessors(t *testing.T) {
	cores := runtime.GOMAXPROCS(0)
	conns := func(name string, o *Options) string {
		t.Helper()
		o.Scenario, o.Engine = "ycsb", "sqlite"
		o.Sets = append(o.Sets, "ycsb.records=200")
		doc, code, out := run(t, o)
		if code != 0 {
			t.Fatalf("%s: exit %d:\n%s", name, code, out)
		}
		if got := runtime.GOMAXPROCS(0); got != cores {
			t.Fatalf("%s: GOMAXPROCS %d after the run, want %d back", name, got, cores)
		}
		if doc.Server == nil {
			t.Fatalf("%s: run.json names no server", name)
		}
		return doc.Server.Extra["max_conns"]
	}
	open := func() *Options {
		return &Options{Model: "phases", Phases: "1s@40/s", Think: "5ms", Given: map[string]bool{"phases": true, "think": true}}
	}
	if got := conns("phases", open()); got != strconv.Itoa(cores) {
		t.Fatalf("phases on SQLite: %s connections, want one per processor (%d)", got, cores)
	}
	closed := &Options{Users: 2, Ops: 200, Given: map[string]bool{"users": true, "ops": true}}
	if got, want := conns("closed", closed), strconv.Itoa(max(4, 4*cores)); got != want {
		t.Fatalf("closed on SQLite: %s connections, want SQLite's default %s", got, want)
	}
	t.Setenv("GOMAXPROCS", strconv.Itoa(cores))
	if got, want := conns("phases, GOMAXPROCS set", open()), strconv.Itoa(max(4, 4*cores)); got != want {
		t.Fatalf("phases with GOMAXPROCS set: %s connections, want SQLite's default %s", got, want)
	}
}
