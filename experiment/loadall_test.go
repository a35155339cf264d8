package experiment

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/runner"
)

// loadErrors writes src to a file x.yaml and loads it, returning its
// errors ("" with none).
func loadErrors(t *testing.T, src string) (string, Errors) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "x.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(file, "")
	if err == nil {
		return "", nil
	}
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error %v is not an Errors", err)
	}
	return strings.ReplaceAll(err.Error(), file, "x.yaml"), errs
}

// TestLoadReportsEverything checks that Load lists every problem of a
// file in one error, whether Parse or Validate finds it, with its line
// and column: an unreachable combination beside a misnamed SLO
// operation, three YAML mistakes beside a build-dependent one, a tab.
func TestLoadReportsEverything(t *testing.T) {
	t.Setenv("PGHOST", "") // postgres then needs a target or a cluster
	const unreachable = "scenario: ycsb\nsettings: {ycsb.records: 100}\nload: {users: 1, duration: 1s}\nfactors:\n  engine: [sqlite, postgres]\nslo: [p95 < 1s for reads]\n"
	for _, tc := range []struct {
		name string
		src  string
		n    int      // errors; 0: the file is valid
		want []string // in the message
	}{
		{"unreachable combination and SLO operation", unreachable, 2, []string{
			`x.yaml:5:20: combination c02 (engine=postgres): engine postgres: `, "none was named", "`clusters: {postgres: {}}`",
			`x.yaml:6:7: slo: "p95 < 1s for reads": scenario ycsb has no operation "reads"`, `(did you mean "read"?)`}},
		{"a target serves postgres", "target: postgres://u@127.0.0.1:1/db\n" + strings.NewReplacer("reads", "read", "sqlite", "memory").Replace(unreachable), 0, nil},
		{"a cluster serves postgres", "clusters: {postgres: {}}\n" + strings.Replace(unreachable, "reads", "read", 1), 0, nil},
		{"a problem several combinations share", "scenario: ycsb\nload: {duration: 1s}\nfactors:\n  engine: [memory, postgres]\n  users: [1, 2]\n", 1, []string{
			"x.yaml:4:20: combinations c03 (engine=postgres users=1), c04 (engine=postgres users=2): ", "none was named"}},
		{"three YAML mistakes and a setting", "scenario: ycsb\nengine: memory\nsetings: {ycsb.records: 100}\nload:\n  users: [1, 2]\n  duration: 3x\nfactors:\n  ycsb.workload: [a, q]\n", 4, []string{
			`x.yaml:3:1: unknown key "setings"`, `(did you mean "settings"?)`,
			"x.yaml:5:10: load.users: expected a value, got a list",
			`x.yaml:6:13: load.duration: "3x": allowed: a duration`,
			`x.yaml:8:22: factors.ycsb.workload: bad setting value: ycsb.workload="q"`}},
		{"a tab", "scenario: ycsb\nload:\n  users: 1\n\tduration: 1s\n", 1, []string{
			"x.yaml:4:1: a tab character; YAML indents with spaces only (replace the tab with spaces)"}},
		{"a tab after spaces", "scenario: ycsb\nload:\n  \tusers: 1\n", 1, []string{
			"x.yaml:3:3: a tab character; YAML indents with spaces only"}},
	} {
		msg, errs := loadErrors(t, tc.src)
		if len(errs) != tc.n {
			t.Errorf("%s: %d errors, want %d:\n%s", tc.name, len(errs), tc.n, msg)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: error lacks %q:\n%s", tc.name, w, msg)
			}
		}
		if strings.Contains(msg, "found character") {
			t.Errorf("%s: the parser's message: %s", tc.name, msg)
		}
	}
}

// TestCheckServer checks the runner's rule the combinations are checked
// with: an engine that needs a server, given neither a target nor a
// cluster, is refused; one that finds its store without them is not.
func TestCheckServer(t *testing.T) {
	t.Setenv("PGHOST", "")
	t.Setenv("SCALELAB_OPENSEARCH_URL", "")
	t.Setenv("SCALELAB_CASSANDRA_TARGET", "")
	for _, tc := range []struct {
		engine, target string
		cluster        bool
		refused        bool
	}{
		{"postgres", "", false, true},
		{"postgres", "postgres://u@127.0.0.1:1/db", false, false},
		{"postgres", "", true, false},
		{"mongodb", "", false, true},
		{"opensearch", "", false, true},
		{"cassandra", "", false, true},
		{"sqlite", "", false, false},
		{"memory", "", false, false},
		{"nosuch", "", false, false}, // refused as an engine this build lacks
	} {
		err := runner.CheckServer(tc.engine, tc.target, tc.cluster)
		if (err != nil) != tc.refused || err != nil && !strings.Contains(err.Error(), "none was named") {
			t.Errorf("%s target %q cluster %v: %v, want refused %v", tc.engine, tc.target, tc.cluster, err, tc.refused)
		}
	}
	t.Setenv("PGHOST", "127.0.0.1")
	if err := runner.CheckServer("postgres", "", false); err != nil {
		t.Errorf("postgres with PGHOST: %v", err)
	}
}
