package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadRefusesForeignFiles(t *testing.T) {
	for _, c := range []struct {
		file, body, want string
	}{
		{RunFile, `{"tool":"k6"}`, `run.json is not a scalelab results file (no "scalelab" version block)`},
		{RunFile, `{"scalelab":"1.0"}`, `no "scalelab" version block`},
		{RunFile, `{"scalelab":{"go":"go1.22"}}`, `no "version"`},
		{RunFile, `not json{`, "run.json is not a valid run.json"},
		{ExperimentFile, `{"type":"jmeter"}`, `experiment.json is not a scalelab results file (no "scalelab" version block)`},
		{ExperimentFile, `{"scalelab":{"version":"dev","go":"go1.22"}}`, `no "schema" field`},
		{ExperimentFile, `[1,2]`, "experiment.json is not a valid experiment.json"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, c.file), []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		var err error
		if c.file == RunFile {
			_, err = Read(dir)
		} else {
			_, err = ReadExperiment(dir)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), dir) || ExitCode(err) != ExitUsage {
			t.Errorf("%s %s: %v (exit %d), want %q", c.file, c.body, err, ExitCode(err), c.want)
		}
	}
}

// Files every scalelab writes, from the first run.json and experiment.json
// on (a version block, and an experiment's schema), are still read, even
// with most fields missing or empty.
func TestReadAcceptsScalelabFiles(t *testing.T) {
	dir := t.TempDir()
	if err := WriteJSON(filepath.Join(dir, RunFile), &Run{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(filepath.Join(dir, ExperimentFile), &Experiment{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(dir); err != nil {
		t.Errorf("Read of an empty Run: %v", err)
	}
	if _, err := ReadExperiment(dir); err != nil {
		t.Errorf("ReadExperiment of an empty Experiment: %v", err)
	}
	old := `{"scalelab":{"version":"0.1.0","go":"go1.22.1"},"status":"ok","exit_code":0,"scenario":"ycsb","engine":"sqlite"}`
	if err := os.WriteFile(filepath.Join(dir, RunFile), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := Read(dir); err != nil || r.Scenario != "ycsb" {
		t.Errorf("Read of a first version's run.json: %+v %v", r, err)
	}
}
