package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/segment"
	"github.com/scalelab/scalelab/setting"
)

// Reaudit reads back the writes of a finished or dead run from its
// history.log (`scalelab audit DIR`): it reopens the engine and the
// scenario as run.json records them (the cluster by name, or the target of
// the command line; passwords from the environment as for a run), checks
// every write the history holds, and writes the audit into run.json. The
// caller rebuilds a dead run's summary first (report.Rebuild). A lost
// acknowledged write is exit 1, a read-back that cannot finish exit 4.
func Reaudit(ctx context.Context, dir string, r *results.Run, stderr io.Writer) error {
	if m := r.Merged; m != nil {
		var dirs []string
		for _, s := range m.Shards {
			dirs = append(dirs, s.Dir)
		}
		return results.UsageErr("audit %s: a merged result of %d segments (scalelab merge): its audit adds the segments' audits, and it has no %s of its own; audit each segment's directory (%s), then merge them again", dir, m.Count, results.HistoryFile, strings.Join(dirs, ", "))
	}
	path := filepath.Join(dir, results.HistoryFile)
	if _, err := os.Stat(path); err != nil {
		return results.UsageErr("audit %s: no %s: the run was not audited (its scenario writes nothing to check, or --audit=false)", dir, results.HistoryFile)
	}
	scen, err := scenario.Lookup(r.Scenario)
	if err != nil {
		return results.UsageErr("audit %s: %v", dir, err)
	}
	eng, err := engine.Lookup(r.Engine)
	if err != nil {
		return results.UsageErr("audit %s: %v", dir, err)
	}
	set := setting.NewSet(append(append([]setting.Spec{}, eng.Settings()...), scen.Settings()...)...)
	for k, v := range r.Settings {
		if !set.Has(k) {
			continue // a tier's setting, or one this build no longer has
		}
		if err := set.Apply(k + "=" + v); err != nil {
			return results.WithCode(results.ExitUsage, fmt.Errorf("audit %s: run.json setting: %w", dir, err))
		}
	}
	// never load or recreate: the data is what the audit reads
	if k := scen.Name() + ".load"; set.Has(k) {
		if err := set.Apply(k + "=false"); err != nil {
			return results.WithCode(results.ExitInternal, fmt.Errorf("audit %s: %w", dir, err))
		}
	}
	cfg := engine.Config{Settings: set, Dir: dir, Target: flagValue(r.Command, "target")}
	laterRun, err := reauditCluster(dir, r, &cfg, stderr)
	if err != nil {
		return err
	}
	if err := reopenable(dir, eng.Name(), cfg); err != nil {
		return err
	}
	var seg segment.Segment
	if r.Segment != nil {
		seg = segment.Segment{Index: r.Segment.Index, Count: r.Segment.Count}
	}
	conn, err := eng.Open(ctx, cfg)
	if err != nil {
		return results.WithCode(results.ExitUnfinished, fmt.Errorf("audit %s: connect to %s: %w", dir, eng.Name(), err))
	}
	defer conn.Close()
	wl, err := scen.Open(ctx, scenario.Env{Engine: eng.Name(), Conn: conn, Settings: set, Seed: r.Load.Seed, Segment: seg, ReadBackOnly: true})
	if err != nil {
		return results.WithCode(results.ExitUnfinished, fmt.Errorf("audit %s: open scenario %s: %w", dir, scen.Name(), err))
	}
	defer wl.Close()
	// a run whose process died (its summary rebuilt, or not yet) streamed
	// its history up to its last flush only
	dead := r.Status == results.StatusIncomplete || r.Status == results.StatusRunning
	a := &auditRun{path: path, seg: seg, laterRun: laterRun, incomplete: dead}
	if rk, ok := scenario.Capability[scenario.RegisterKeyer](wl); ok {
		a.keyOf = rk.RegisterKey
	}
	if rb, ok := scenario.Capability[scenario.ReadBacker](wl); ok && !errors.Is(rb.ReadBack(ctx, nil, nil), errors.ErrUnsupported) {
		a.rb = rb
	}
	if rr, ok := scenario.Capability[scenario.RegisterReader](wl); ok && !errors.Is(rr.ReadVersions(ctx, nil, nil), errors.ErrUnsupported) {
		a.rr = rr
	}
	// the checks of an earlier audit are replaced by this one's
	var kept []string
	for _, f := range r.Failures {
		if !strings.HasPrefix(f, "audit: ") {
			kept = append(kept, f)
		}
	}
	r.Failures = kept
	before := verdict(r.Audit)
	err = a.finish(ctx, r, false, stderr)
	if after := verdict(r.Audit); before != "" && after != before {
		note := fmt.Sprintf("audit: re-run by `scalelab audit` at %s: %s (the run's own audit: %s)", time.Now().UTC().Format(time.RFC3339), after, before)
		fmt.Fprintln(stderr, note)
		r.Warnings = append(r.Warnings, note)
	}
	return err
}

// ErrStoreGone marks a re-audit refused before any read-back because the
// run's store cannot be reopened as it was: the caller leaves run.json as
// it was.
var ErrStoreGone = errors.New("the run's store cannot be reopened as it was")

// reopenable refuses a read-back of a store that the run's end took away:
// an engine whose data lived only in the run's process (exit 2), or a
// store file that no longer exists (exit 4), which opening would create
// empty and read back as every write lost.
func reopenable(dir, name string, cfg engine.Config) error {
	if engine.DataInProcess(name, cfg.Target) {
		return results.WithCode(results.ExitUsage, fmt.Errorf("audit %s: %w: the %s engine keeps its data in the run's process, which has ended: there is nothing to read back", dir, ErrStoreGone, name))
	}
	file, ok := engine.StoreFile(name, cfg)
	if !ok {
		return nil
	}
	if _, err := os.Stat(file); err != nil {
		why := fmt.Sprintf("%s: %v", file, err)
		if errors.Is(err, fs.ErrNotExist) {
			why = fmt.Sprintf("its %s file %s no longer exists", name, file)
		}
		return results.WithCode(results.ExitUnfinished, fmt.Errorf("audit %s: %w: %s; there is nothing to read back (the audit never creates the file: an empty store would read back every write as lost)", dir, ErrStoreGone, why))
	}
	return nil
}

// reauditCluster points the read-back at the nodes of the run's cluster
// that run now (a replica a fault killed stays down; the primary holds
// every write), and reports whether later runs were recorded on it.
func reauditCluster(dir string, r *results.Run, cfg *engine.Config, stderr io.Writer) (bool, error) {
	if r.Cluster == nil {
		return false, nil
	}
	st, err := cluster.Load(r.Cluster.Name)
	if err != nil {
		return false, results.WithCode(results.ExitUnfinished, fmt.Errorf("audit %s: the run's cluster: %w", dir, err))
	}
	live := *st
	live.Nodes = nil
	for _, n := range st.Nodes {
		if cluster.Alive(n.PID) {
			live.Nodes = append(live.Nodes, n)
		}
	}
	if len(live.Nodes) == 0 {
		return false, results.WithCode(results.ExitUnfinished, fmt.Errorf("audit %s: no node of cluster %s is running; start it again (scalelab cluster up) before the read-back", dir, st.Name))
	}
	if len(live.Nodes) < len(st.Nodes) {
		fmt.Fprintf(stderr, "audit: %d of %d nodes of cluster %s run; reading back through them\n", len(live.Nodes), len(st.Nodes), st.Name)
	}
	cfg.Cluster, cfg.Target = &live, st.Target
	since := r.Start
	if r.End != nil {
		since = *r.End
	}
	later, err := st.RunsAfter(since, dir)
	if err != nil {
		fmt.Fprintf(stderr, "audit: %v\n", err)
	}
	if len(later) == 0 {
		return false, nil
	}
	fmt.Fprintf(stderr, "audit: %d later runs were recorded on cluster %s (the first in %s): what they may have reloaded or deleted is counted \"overwritten since the run: not judged\"\n", len(later), st.Name, later[0].Dir)
	return true, nil
}

// verdict words an audit's outcome: "" when it was not checked.
func verdict(a *results.Audit) string {
	if a == nil || !a.Checked {
		return ""
	}
	lost, what := a.Lost, "items"
	if g := a.Registers; g != nil {
		if !g.Checked {
			return ""
		}
		lost += g.Lost + g.Resurrected
		what = "writes"
	}
	if lost == 0 {
		return "no acknowledged write lost"
	}
	return fmt.Sprintf("%d %s lost", lost, what)
}

// flagValue returns the value of --name in a recorded command line.
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == "--"+name || a == "-"+name {
			if i+1 < len(args) {
				return args[i+1]
			}
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}
