package study

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/scalelab/scalelab/report"
	"github.com/scalelab/scalelab/results"
)

// SummaryFile is the page's summary in Markdown, for docs/results/.
const SummaryFile = "study.md"

// Row is one finding with what scalelab measured and the verdict.
type Row struct {
	Finding   *Finding
	Measure   *Figure // nil when not measured
	Reference *Figure
	Outcome   Outcome
	// Explanation is what the data says about a disagreement or a
	// saturated host (the runs' telemetry verdicts).
	Explanation string
}

// Figure is a measured figure over the runs of one combination.
type Figure struct {
	Label  string // the combination
	Op     string
	Metric string
	Unit   string
	Values []float64
	Stat   results.Stat
	// Saturation lists what its runs' telemetry found at its limit
	// (distinct: a tier's node and resource, or the host's CPUs).
	Saturation []string
	// HostSaturated counts the runs whose host's CPUs saturated.
	HostSaturated, Runs int
}

// Page is a study page: the record of the run and a row per finding.
type Page struct {
	Dir    string
	Record *Record
	Rows   []Row
	// Servers are the store versions the runs measured ("engine version").
	Servers []string
	// Scale says, per experiment, at which CPU share each tier's nodes
	// ran (scaleText); Load is what the host's CPUs did in its runs.
	Scale []string
	Load  []HostLoad
}

// Build reads a study results directory (study.json and each
// experiment's experiment.json and run.json files) and decides every
// finding's verdict.
func Build(dir string) (*Page, error) {
	rec, err := ReadRecord(dir)
	if err != nil {
		return nil, err
	}
	p := &Page{Dir: dir, Record: rec}
	exps, skipped := p.readExperiments(dir)
	for i := range rec.Study.Findings {
		f := &rec.Study.Findings[i]
		row := Row{Finding: f}
		if f.NotReproducible != "" || f.Measure == nil {
			row.Outcome = Decide(f, nil, nil)
			p.Rows = append(p.Rows, row)
			continue
		}
		ref := f.Ref()
		// why an experiment was not used comes first: it is the cause
		var errs []string
		for _, name := range []string{f.Measure.Experiment, ref.Experiment} {
			if why, ok := skipped[name]; ok && !slices.Contains(errs, why.reason) {
				errs = append(errs, why.reason)
			}
		}
		row.Measure, err = figure(dir, rec, exps, *f.Measure)
		if err != nil {
			errs = append(errs, err.Error())
		}
		row.Reference, err = figure(dir, rec, exps, ref)
		if err != nil {
			errs = append(errs, err.Error())
		}
		if len(errs) > 0 || row.Measure == nil || row.Reference == nil {
			row.Outcome = notMeasured(errs, skipped[f.Measure.Experiment], skipped[ref.Experiment])
			p.Rows = append(p.Rows, row)
			continue
		}
		row.Outcome = Decide(f, row.Measure.Values, row.Reference.Values)
		hostRule(f, row.Measure, row.Reference, &row.Outcome)
		if row.Outcome.Verdict == Disagrees || row.Outcome.Verdict == NotReproducible {
			row.Explanation = explain(&row)
		}
		p.Rows = append(p.Rows, row)
	}
	return p, nil
}

// unmeasured is why an experiment's results are not used: it failed, or
// the user stopped the study in it or before it (unfinished).
type unmeasured struct {
	reason     string
	unfinished bool
}

// readExperiments reads each experiment's experiment.json, notes its
// store versions, scale and host load on the page, and returns the
// results that may be used and why the others may not.
func (p *Page) readExperiments(dir string) (map[string]*results.Experiment, map[string]unmeasured) {
	exps := map[string]*results.Experiment{}
	why := map[string]unmeasured{}
	for _, re := range p.Record.Experiments {
		unfinished := re.Status == "interrupted" || re.Status == "pending"
		ex, err := results.ReadExperiment(filepath.Join(dir, re.Dir))
		switch {
		case err != nil && re.Status == "pending":
			why[re.Name] = unmeasured{fmt.Sprintf("experiment %s did not run: the study was stopped before it", re.Name), true}
			continue
		case err != nil:
			why[re.Name] = unmeasured{fmt.Sprintf("experiment %s has no results (%s)", re.Name, firstLine(re.Error, re.Status)), unfinished}
			continue
		}
		exps[re.Name] = ex
		if re.Status == "failed" || re.Status == "interrupted" {
			why[re.Name] = unmeasured{fmt.Sprintf("experiment %s %s: %s", re.Name, re.Status, firstLine(re.Error, re.Status)), unfinished}
		}
		p.servers(filepath.Join(dir, re.Dir), ex)
		p.Scale = append(p.Scale, scaleText(re.Name, filepath.Join(dir, re.Dir), ex))
		p.Load = append(p.Load, hostLoad(re.Name, filepath.Join(dir, re.Dir), ex))
	}
	return exps, why
}

// notMeasured is the outcome of a finding that could not be decided for
// the reasons errs: Interrupted when the user stopped the study in or
// before one of its experiments and neither failed, otherwise not
// reproducible here.
func notMeasured(errs []string, sides ...unmeasured) Outcome {
	interrupted, failed := false, false
	for _, s := range sides {
		interrupted = interrupted || s.unfinished
		failed = failed || (s.reason != "" && !s.unfinished)
	}
	if interrupted && !failed {
		return Outcome{Verdict: Interrupted, Reason: strings.Join(errs, "; ")}
	}
	return Outcome{Verdict: NotReproducible, Reason: "not measured: " + strings.Join(errs, "; ")}
}

// explain says what the runs' data shows beside a disagreement: the
// measured ratio against the published one and which tier saturated.
func explain(r *Row) string {
	var parts []string
	if r.Outcome.Ratio != nil {
		s := fmt.Sprintf("measured %s = %s", r.Finding.About, fmtRatio(*r.Outcome.Ratio))
		if pr, ok := publishedRatio(r.Finding); ok {
			s += fmt.Sprintf(" against the study's %s", fmtRatio(pr))
		}
		parts = append(parts, s)
	}
	for _, fig := range []*Figure{r.Measure, r.Reference} {
		if fig != nil && len(fig.Saturation) > 0 {
			parts = append(parts, fmt.Sprintf("%s: the limit was %s", fig.Label, strings.Join(fig.Saturation, ", ")))
		}
	}
	return strings.Join(parts, ". ")
}

// figure collects one selector's values from its experiment's results.
func figure(dir string, rec *Record, exps map[string]*results.Experiment, sel Selector) (*Figure, error) {
	ex := exps[sel.Experiment]
	if ex == nil {
		return nil, nil
	}
	c, err := Pick(ex.Factors, ex.Combinations, sel.Levels)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sel.Experiment, err)
	}
	fig := &Figure{Label: c.Label, Op: sel.Op, Metric: sel.Metric}
	for _, row := range ex.Comparison {
		if row.Combination == c.ID && row.Op == sel.Op && row.Metric == sel.Metric {
			fig.Values, fig.Stat, fig.Unit = row.Values, row.Stat, row.Unit
		}
	}
	if len(fig.Values) == 0 {
		return nil, fmt.Errorf("%s: %s has no measured %s of %s", sel.Experiment, c.Label, sel.Metric, sel.Op)
	}
	var expDir string
	for _, re := range rec.Experiments {
		if re.Name == sel.Experiment {
			expDir = filepath.Join(dir, re.Dir)
		}
	}
	for _, ref := range c.Runs {
		if !ref.Measured {
			continue
		}
		fig.Runs++
		run, err := results.Read(filepath.Join(expDir, ref.Dir))
		if err != nil || run.Telemetry == nil {
			continue
		}
		var found []string
		if sat := run.Telemetry.Saturated; sat != nil && sat.Resource != "host" {
			found = append(found, fmt.Sprintf("%s %s %s", sat.Tier, sat.Node, sat.Resource))
		}
		if HostSaturated(run.Telemetry) {
			fig.HostSaturated++
			found = append(found, "the host's CPUs")
		}
		for _, what := range found {
			if !slices.Contains(fig.Saturation, what) {
				fig.Saturation = append(fig.Saturation, what)
			}
		}
	}
	return fig, nil
}

// servers notes the store versions of an experiment's first runs.
func (p *Page) servers(expDir string, ex *results.Experiment) {
	for _, c := range ex.Combinations {
		for _, ref := range c.Runs {
			run, err := results.Read(filepath.Join(expDir, ref.Dir))
			if err != nil || run.Server == nil || run.Server.Version == "" {
				continue
			}
			name := run.Engine
			if run.Server.Product != "" {
				name = run.Server.Product
			}
			s := name + " " + run.Server.Version
			if !slices.Contains(p.Servers, s) {
				p.Servers = append(p.Servers, s)
			}
			break
		}
	}
}

// publishedRatio is the first published figure over the second, when the
// two share a unit.
func publishedRatio(f *Finding) (float64, bool) {
	if len(f.Published) < 2 || f.Published[0].Unit != f.Published[1].Unit || f.Published[1].Value == 0 {
		return 0, false
	}
	return f.Published[0].Value / f.Published[1].Value, true
}

func fmtRatio(r float64) string {
	if math.Abs(r) >= 10 {
		return strconv.FormatFloat(r, 'f', 1, 64)
	}
	return strconv.FormatFloat(r, 'f', 2, 64)
}

// fmtNum prints a figure with about three significant digits.
func fmtNum(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func firstLine(s, dflt string) string {
	if s == "" {
		return dflt
	}
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// PublishedText is the study's figures in one line.
func (r *Row) PublishedText() string {
	var parts []string
	for _, p := range r.Finding.Published {
		parts = append(parts, fmt.Sprintf("%s: %s %s", p.Label, fmtNum(p.Value), p.Unit))
	}
	if pr, ok := publishedRatio(r.Finding); ok {
		parts = append(parts, "ratio "+fmtRatio(pr))
	}
	if len(parts) == 0 {
		return "(no figure, in words)"
	}
	return strings.Join(parts, "; ")
}

// figText is a figure with its CI and run count.
func figText(f *Figure) string {
	s := fmt.Sprintf("%s: %s %s", f.Label, fmtNum(f.Stat.Mean), f.Unit)
	if f.Stat.CILow != nil && f.Stat.CIHigh != nil {
		s += fmt.Sprintf(" [%s, %s]", fmtNum(*f.Stat.CILow), fmtNum(*f.Stat.CIHigh))
	}
	return s + fmt.Sprintf(" n=%d", f.Stat.N)
}

// MeasuredText is scalelab's figures in one line.
func (r *Row) MeasuredText() string {
	if r.Measure == nil || r.Reference == nil {
		return "-"
	}
	s := figText(r.Measure) + "; " + figText(r.Reference)
	if r.Outcome.Ratio != nil {
		s += "; ratio " + fmtRatio(*r.Outcome.Ratio)
	}
	return s
}

// Notes are the page's statements about comparability and scale.
func (p *Page) Notes() []string {
	return []string{
		"Absolute times are not comparable with the study's: its hardware, versions and network differ. The verdicts compare directions and ratios, with Welch's test at the 5 % level on the runs' values.",
		fmt.Sprintf("Every tier ran on this one machine of %d cores, scaled down: each node held to a fixed CPU share (its cgroup limit, under \"scale\"), so that N nodes have N shares as the study's N machines had. A row whose host saturated (the runs' mean host CPU at %.0f %% of its cores or more, every process of the machine counted) says so; it is not reproducible here when it compares topologies, or when only one of its sides ran on a saturated host.", p.Record.Host.CPUs, 100*HostBusyShare),
	}
}

// Facts are the page's header.
func (p *Page) Facts() [][2]string {
	h := p.Record.Host
	machine := fmt.Sprintf("%d cores", h.CPUs)
	if h.CPUModel != "" {
		machine += " (" + h.CPUModel + ")"
	}
	if h.MemBytes > 0 {
		machine += fmt.Sprintf(", %.1f GiB memory", float64(h.MemBytes)/(1<<30))
	}
	if h.Kernel != "" {
		machine += ", Linux " + h.Kernel
	}
	versions := "scalelab " + p.Record.Scalelab.Version + ", " + p.Record.Scalelab.Go
	if len(p.Servers) > 0 {
		versions += "; " + strings.Join(p.Servers, ", ")
	}
	var exps []string
	for _, e := range p.Record.Experiments {
		s := e.File + profileText(e.Profile)
		if e.Repeats > 0 {
			s += fmt.Sprintf(", %d repeats", e.Repeats)
		}
		s += fmt.Sprintf(": %s, %d runs", e.Status, e.Runs)
		exps = append(exps, s)
	}
	var loads []string
	for _, l := range p.Load {
		s := l.String()
		for _, re := range p.Record.Experiments {
			if re.Name == l.Experiment {
				if la := loadAvgText(re); la != "" {
					s += "; " + la
				}
			}
		}
		loads = append(loads, s)
	}
	return [][2]string{
		{"study", p.Record.Study.ID + " " + p.Record.Study.Name},
		{"profile", p.Record.Profile},
		{"status", p.Record.Status},
		{"machine", machine},
		{"versions", versions},
		{"experiments", strings.Join(exps, "; ")},
		{"scale", strings.Join(p.Scale, " | ")},
		{"host load", strings.Join(loads, " | ")},
		{"command", strings.Join(p.Record.Command, " ")},
		{"results", filepath.Base(filepath.Clean(p.Dir)) + ": study.json, and each experiment's experiment.json and runs/*/run.json"},
	}
}

// Write writes study.html and study.md into dir and the terminal table
// to w.
func (p *Page) Write(dir string, w io.Writer) error {
	sp := report.StudyPage{Title: "Study " + p.Record.Study.ID + ": " + p.Record.Study.Title, Question: p.Record.Study.Question,
		Setup: p.Record.Study.Setup, Facts: p.Facts(), Notes: p.Notes()}
	for i := range p.Rows {
		r := &p.Rows[i]
		sp.Rows = append(sp.Rows, report.StudyRow{ID: r.Finding.ID, Finding: r.Finding.Finding, Setup: r.Finding.Setup, Source: r.Finding.Source,
			Published: r.PublishedText(), About: r.Finding.About + expectText(r.Finding), Measured: r.MeasuredText(), Verdict: r.Outcome.Verdict,
			Reason: r.Outcome.Reason, Explanation: r.Explanation})
	}
	if err := report.WriteStudy(filepath.Join(dir, PageFile), sp); err != nil {
		return fmt.Errorf("write the study page: %w", err)
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, SummaryFile), []byte(p.Markdown())); err != nil {
		return fmt.Errorf("write the study summary: %w", err)
	}
	p.Terminal(w)
	return nil
}

func expectText(f *Finding) string {
	if f.Expect == "" {
		return ""
	}
	s := " (study: " + f.Expect
	if f.Large {
		s += ", large"
	}
	return s + ")"
}

// Terminal prints the page as a table.
func (p *Page) Terminal(w io.Writer) {
	fmt.Fprintf(w, "Study %s: %s\n", p.Record.Study.ID, p.Record.Study.Title)
	for _, f := range p.Facts() {
		fmt.Fprintf(w, "  %-12s %s\n", f[0]+":", f[1])
	}
	for _, n := range p.Notes() {
		fmt.Fprintf(w, "  %s\n", n)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FINDING\tABOUT\tPUBLISHED\tSCALELAB (mean [95% CI] n)\tVERDICT")
	for i := range p.Rows {
		r := &p.Rows[i]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Finding.ID, r.Finding.About+expectText(r.Finding), r.PublishedText(), r.MeasuredText(), r.Outcome.Verdict)
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	for i := range p.Rows {
		r := &p.Rows[i]
		fmt.Fprintf(w, "  %s (%s): %s: %s\n", r.Finding.ID, r.Finding.Source, r.Outcome.Verdict, r.Outcome.Reason)
		if r.Explanation != "" {
			fmt.Fprintf(w, "    why: %s\n", r.Explanation)
		}
	}
	fmt.Fprintf(w, "\nPage: %s\n", filepath.Join(p.Dir, PageFile))
}

// Markdown is the page's summary for docs/results/: the facts, the table
// and every verdict's reason.
func (p *Page) Markdown() string {
	var b strings.Builder
	esc := func(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
	fmt.Fprintf(&b, "# Study %s: %s\n\n%s\n\n", p.Record.Study.ID, p.Record.Study.Title, p.Record.Study.Question)
	for _, f := range p.Facts() {
		if f[0] == "command" {
			f[1] = "`" + f[1] + "`"
		}
		fmt.Fprintf(&b, "- %s: %s\n", f[0], f[1])
	}
	b.WriteString("\n")
	for _, n := range p.Notes() {
		fmt.Fprintf(&b, "%s\n\n", n)
	}
	b.WriteString("| finding | source | about | published | scalelab (mean [95 % CI] n) | verdict |\n|---|---|---|---|---|---|\n")
	for i := range p.Rows {
		r := &p.Rows[i]
		v := "**" + r.Outcome.Verdict + "**: " + r.Outcome.Reason
		if r.Explanation != "" {
			v += ". Why: " + r.Explanation
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", esc(r.Finding.Finding), esc(r.Finding.Source), esc(r.Finding.About+expectText(r.Finding)), esc(r.PublishedText()), esc(r.MeasuredText()), esc(v))
	}
	return b.String()
}
