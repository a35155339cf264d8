package report_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/engine/postgres/pgtest"
	"github.com/scalelab/scalelab/internal/testenv"
)

// firstScreen is what the test reads of a page at 1280x800: where the
// answer's parts are, and what the page shows before them.
type firstScreen struct {
	ViewH       float64  `json:"viewH"`
	VerdictText string   `json:"verdictText"`
	VerdictBot  float64  `json:"verdictBot"`
	TotalText   []string `json:"totalText"`
	TotalBot    float64  `json:"totalBot"`
	Before      []string `json:"before"` // tall elements before the answer
}

// firstScreenScript measures, on the loaded page, the element sel (the
// answer), its first p.verdict, its last tr.total, and lists the
// elements before sel taller than 150 px.
func firstScreenScript(sel string) string {
	return `(() => {
  const a = document.querySelector('` + sel + `');
  if (!a) return {viewH: innerHeight, before: ['no ` + sel + `']};
  const v = a.querySelector('p.verdict');
  const rows = [...a.querySelectorAll('tr.total')];
  const last = rows.length ? rows[rows.length - 1] : null;
  const before = [...document.body.children].filter(e => e.compareDocumentPosition(a) & Node.DOCUMENT_POSITION_FOLLOWING)
    .filter(e => e.getBoundingClientRect().height > 150).map(e => e.tagName + ' ' + e.className);
  return {viewH: innerHeight, verdictText: v ? v.textContent : '', verdictBot: v ? v.getBoundingClientRect().bottom : 1e9,
    totalText: rows.map(r => r.innerText), totalBot: last ? last.getBoundingClientRect().bottom : a.getBoundingClientRect().bottom,
    before: before};
})()`
}

// TestCompareAnswerInChromium compares a real ycsb B run on SQLite with
// one on PostgreSQL (a pgtest server) and loads the comparison page in
// headless Chromium at 1280x800: the verdict on the total and the total
// rows of the answer are in the first screen with nothing tall before
// them. The run page's headline (throughput, p50 and p99 per operation,
// errors) is in the first screen too. Screenshots of both first screens
// are saved as test artifacts.
func TestCompareAnswerInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL, makes real runs and starts a browser")
	}
	chrome := chromium(t)
	if _, err := postgres.BinDir(); err != nil {
		testenv.Unavailable(t, "PostgreSQL", err, "apt-get install postgresql")
	}
	c, err := pgtest.Start(0, pgtest.FastSettings)
	if err != nil {
		t.Fatalf("start postgres: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop() }) // after the database's own cleanup
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte(c.Password()), 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	a, b := filepath.Join(root, "ycsb-sqlite"), filepath.Join(root, "ycsb-postgres")
	common := []string{"--set", "ycsb.workload=b", "--users", "2", "--duration", "2s", "--progress", "off"}
	scalelab(t, append([]string{"run", "ycsb", "--out", a}, common...)...)
	scalelab(t, append([]string{"run", "ycsb", "--out", b, "--engine", "postgres", "--target", c.NewDatabase(t), "--set", "postgres.password_file=" + pw}, common...)...)
	scalelab(t, "report", a, b)
	cmp := filepath.Join(a, "compare-ycsb-postgres.html")

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chrome), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 800),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true), chromedp.Flag("disable-sync", true))
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	look := func(t *testing.T, path, sel, shot string) firstScreen {
		t.Helper()
		tctx, tcancel := context.WithTimeout(ctx, 60*time.Second)
		defer tcancel()
		if err := chromedp.Do(tctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate((&url.URL{Scheme: "file", Path: path}).String())); err != nil {
			t.Fatalf("load %s: %v", path, err)
		}
		f, err := chromedp.Run(tctx, chromedp.Evaluate[firstScreen](firstScreenScript(sel)))
		if err != nil {
			t.Fatalf("read the DOM: %v", err)
		}
		if png, err := chromedp.Run(tctx, chromedp.CaptureScreenshot()); err == nil {
			_ = os.WriteFile(filepath.Join(artifacts(t), shot), png, 0o644)
		}
		return f
	}

	t.Run("comparison", func(t *testing.T) {
		f := look(t, cmp, "#answer", "compare-first-screen.png")
		t.Logf("first screen: %+v", f)
		if f.ViewH != 800 || len(f.Before) > 0 {
			t.Errorf("viewport %v px high; tall elements before the answer: %q", f.ViewH, f.Before)
		}
		if !strings.Contains(f.VerdictText, "against the baseline, all operations: throughput") || f.VerdictBot > f.ViewH {
			t.Errorf("the verdict %q ends at %.0f px, below the first screen (%v px)", f.VerdictText, f.VerdictBot, f.ViewH)
		}
		if len(f.TotalText) != 2 || !strings.HasPrefix(f.TotalText[0], "total\tops/s") || !strings.HasPrefix(f.TotalText[1], "total\tp99 ms") || f.TotalBot > f.ViewH {
			t.Errorf("the total rows %q end at %.0f px, below the first screen (%v px)", f.TotalText, f.TotalBot, f.ViewH)
		}
		for _, r := range f.TotalText {
			if !strings.Contains(r, "%") || !(strings.Contains(r, "better") || strings.Contains(r, "worse") || strings.Contains(r, "same")) {
				t.Errorf("total row %q lacks a change and its verdict", r)
			}
		}
	})
	t.Run("run page", func(t *testing.T) {
		f := look(t, filepath.Join(b, "report.html"), "#headline", "run-first-screen.png")
		if len(f.Before) > 0 || f.TotalBot > f.ViewH {
			t.Errorf("the headline ends at %.0f px (first screen %v px); tall elements before it: %q", f.TotalBot, f.ViewH, f.Before)
		}
	})
}
