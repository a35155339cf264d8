package runner

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/scalelab/scalelab/engine/sqlite"
	"github.com/scalelab/scalelab/report"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// TestReauditOverwrittenSince: `scalelab audit DIR` of a run whose keys a
// later run updated again counts them "overwritten since the run: not
// judged" (they hold versions later than any the run wrote), not lost,
// and leaves the run's verdict as it was.
func TestReauditOverwrittenSince(t *testing.T) {
	t.Parallel()
	f := newYCSBFile(t, 100)
	runOpts := Options{Users: 2, Given: map[string]bool{"users": true}, Ops: 3000, Sets: []string{"ycsb.workload=a", "ycsb.load=false"}}
	runOpts.Args = []string{"scalelab", "run", "ycsb", "--engine", "sqlite", "--target", f.db}
	first := f.run(t, "first", runOpts)
	if g := first.Audit.Registers; g == nil || !g.Checked || g.Lost != 0 || g.Overwritten != 0 {
		t.Fatalf("first run's own audit: %+v", g)
	}
	f.run(t, "second", runOpts) // the same keys, updated again later
	dir := f.dir("first")
	r := resultstest.Read(t, dir)
	var stderr bytes.Buffer
	if err := Reaudit(context.Background(), dir, r, &stderr); err != nil {
		t.Fatalf("reaudit: %v\n%s", err, stderr.String())
	}
	g := r.Audit.Registers
	if g == nil || !g.Checked || g.Lost != 0 || g.Resurrected != 0 || g.Overwritten == 0 || len(r.Failures) != 0 {
		t.Fatalf("reaudit after a later run: %+v, failures %v: want none lost, some overwritten since", g, r.Failures)
	}
	for _, w := range r.Warnings {
		if strings.Contains(w, "re-run by") {
			t.Errorf("verdict noted as changed: %s", w)
		}
	}
	var out bytes.Buffer
	report.TerminalAudit(&out, r)
	if !strings.Contains(out.String(), "overwritten since the run: not judged") {
		t.Errorf("audit line %q does not say what was overwritten", out.String())
	}
}

// TestReauditKilledRun: `scalelab audit DIR` of a run whose process was
// killed, imitated by cutting its history after half its blocks and
// leaving a torn one: the store holds writes whose records the process
// never wrote. The registers holding them are counted "not yet recorded
// when it was killed: not judged", neither lost nor "overwritten since
// the run".
func TestReauditKilledRun(t *testing.T) {
	t.Parallel()
	f := newYCSBFile(t, 100)
	f.run(t, "killed", Options{Users: 2, Given: map[string]bool{"users": true}, Duration: 2 * time.Second,
		Sets: []string{"ycsb.workload=a", "ycsb.load=false"},
		Args: []string{"scalelab", "run", "ycsb", "--engine", "sqlite", "--target", f.db}})
	dir := f.dir("killed")
	path := filepath.Join(dir, results.HistoryFile)
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ends := historyBlocks(t, file)
	if len(ends) < 4 {
		t.Fatalf("the run wrote %d history blocks; the test needs 4 or more", len(ends))
	}
	// the first half of the blocks, then the first bytes of the next
	cut := ends[len(ends)/2-1]
	if err := os.WriteFile(path, file[:cut+3], 0o644); err != nil {
		t.Fatal(err)
	}
	r := resultstest.Read(t, dir)
	r.Status = results.StatusIncomplete // as `scalelab audit` finds it after a kill: rebuilt
	var stderr bytes.Buffer
	if err := Reaudit(context.Background(), dir, r, &stderr); err != nil {
		t.Fatalf("reaudit: %v\n%s", err, stderr.String())
	}
	g := r.Audit.Registers
	if g == nil || !g.Checked || g.Lost != 0 || g.Resurrected != 0 || g.Overwritten != 0 || g.Unlogged == 0 || len(r.Failures) != 0 {
		t.Fatalf("reaudit of a killed run: %+v, failures %v: want none lost, none overwritten since, some not yet recorded", g, r.Failures)
	}
	var out bytes.Buffer
	report.TerminalAudit(&out, r)
	if !strings.Contains(out.String(), "not yet recorded when it was killed: not judged") || strings.Contains(out.String(), "overwritten since") {
		t.Errorf("audit line %q", out.String())
	}
}

// historyBlocks returns the offsets at which each block of a binary
// history ends.
func historyBlocks(t *testing.T, file []byte) []int {
	t.Helper()
	off := bytes.IndexByte(file, '\n') + 1
	var ends []int
	for off < len(file) {
		n, w := binary.Uvarint(file[off:])
		if w <= 0 || off+w+4+int(n) > len(file) {
			t.Fatalf("history: bad block at offset %d", off)
		}
		off += w + 4 + int(n)
		ends = append(ends, off)
	}
	return ends
}

// TestReauditMissingTargetFile: the re-audit of a run whose --target file
// was deleted refuses before reading back (exit 4, ErrStoreGone, naming
// the file), leaves the run's record as it was and does not create the
// file.
func TestReauditMissingTargetFile(t *testing.T) {
	t.Parallel()
	f := newYCSBFile(t, 100)
	f.run(t, "gone", Options{Users: 2, Given: map[string]bool{"users": true}, Ops: 1000, Sets: []string{"ycsb.workload=a", "ycsb.load=false"},
		Args: []string{"scalelab", "run", "ycsb", "--engine", "sqlite", "--target", f.db}})
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(f.db + suffix); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	dir := f.dir("gone")
	r := resultstest.Read(t, dir)
	before := fmt.Sprintf("%+v %v %v", *r.Audit, r.Failures, r.Warnings)
	var stderr bytes.Buffer
	err := Reaudit(context.Background(), dir, r, &stderr)
	if !errors.Is(err, ErrStoreGone) || results.ExitCode(err) != results.ExitUnfinished || !strings.Contains(err.Error(), f.db+" no longer exists") {
		t.Fatalf("reaudit without its target file: %v (exit %d)", err, results.ExitCode(err))
	}
	if after := fmt.Sprintf("%+v %v %v", *r.Audit, r.Failures, r.Warnings); after != before {
		t.Errorf("the run's record changed:\n%s\n%s", before, after)
	}
	if _, err := os.Stat(f.db); !os.IsNotExist(err) {
		t.Errorf("the re-audit created %s (stat: %v)", f.db, err)
	}
}

// TestReauditMergedResult: `scalelab audit` of a merged result (it has no
// history of its own) is exit 2, saying it is merged and to audit each
// segment's directory, named.
func TestReauditMergedResult(t *testing.T) {
	t.Parallel()
	r := &results.Run{Status: results.StatusOK, Audit: &results.Audit{Checked: true},
		Merged: &results.Merged{Count: 2, Shards: []results.MergedShard{{Index: 0, Dir: "seg-0"}, {Index: 1, Dir: "seg-1"}}}}
	var stderr bytes.Buffer
	err := Reaudit(context.Background(), t.TempDir(), r, &stderr)
	if results.ExitCode(err) != results.ExitUsage || err == nil || !strings.Contains(err.Error(), "a merged result of 2 segments") ||
		!strings.Contains(err.Error(), "audit each segment's directory (seg-0, seg-1)") || strings.Contains(err.Error(), "not audited") {
		t.Fatalf("reaudit of a merged result: %v", err)
	}
}
