package cluster

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// runsFile lists, one JSON object a line, the runs recorded on a cluster:
// when each began and its results directory. `scalelab audit DIR` of an
// older run reads it to learn whether a later run may have overwritten
// what the older one wrote.
const runsFile = "runs.jsonl"

// RunRecord is one run recorded on a cluster.
type RunRecord struct {
	Start time.Time `json:"start"`
	Dir   string    `json:"dir"`
}

// RecordRun appends a run (its start and results directory) to the
// cluster's list of runs, one whole line by one write.
func (st *State) RecordRun(start time.Time, dir string) error {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	b, err := json.Marshal(RunRecord{Start: start.UTC(), Dir: dir})
	if err != nil {
		return fmt.Errorf("record run on cluster %s: %w", st.Name, err)
	}
	f, err := os.OpenFile(filepath.Join(st.Dir, runsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("record run on cluster %s: %w", st.Name, err)
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("record run on cluster %s: %w", st.Name, err)
	}
	return nil
}

// RunsAfter lists the runs recorded on the cluster that began after t,
// other than the one whose results directory is dir. A line that does not
// parse (a torn last line) is skipped.
func (st *State) RunsAfter(t time.Time, dir string) ([]RunRecord, error) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	f, err := os.Open(filepath.Join(st.Dir, runsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("runs of cluster %s: %w", st.Name, err)
	}
	defer f.Close()
	var out []RunRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r RunRecord
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Dir == dir || !r.Start.After(t) {
			continue
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("runs of cluster %s: %w", st.Name, err)
	}
	return out, nil
}
