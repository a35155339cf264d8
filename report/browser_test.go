package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/scalelab/scalelab/cli"
	"github.com/scalelab/scalelab/internal/testenv"
)

const xss = `</script><img src=x onerror=alert(1)>`

// chromium returns the path of a Chromium binary. Without one the test
// fails under CI=true and is skipped elsewhere.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("SCALELAB_CHROMIUM"), "/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	testenv.Unavailable(t, "chromium", errors.New("not installed: the HTML report must be checked in a real browser"), "apt-get install -y chromium")
	return ""
}

// artifacts is where screenshots go: $SCALELAB_ARTIFACTS, else
// report/testdata/artifacts (ignored by git).
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SCALELAB_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("testdata", "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(dir)
	return abs
}

// scalelab runs the command line in process.
func scalelab(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Main(context.Background(), args, &out, &errb); code != 0 {
		t.Fatalf("scalelab %s: exit %d\n%s\n%s", strings.Join(args, " "), code, out.String(), errb.String())
	}
	return out.String()
}

// browserEvents records what the page did that it must not: console
// errors, exceptions, dialogs (an alert from injected markup) and requests
// for anything but the page itself.
type browserEvents struct {
	mu       sync.Mutex
	errors   []string
	dialogs  []string
	requests []string
}

func (b *browserEvents) listen(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
			b.errors = append(b.errors, fmt.Sprintf("console.%s %d args", e.Type, len(e.Args)))
		}
	case *runtime.EventExceptionThrown:
		b.errors = append(b.errors, "exception: "+e.ExceptionDetails.Text)
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError {
			b.errors = append(b.errors, "log: "+e.Entry.Text+" "+e.Entry.URL)
		}
	case *page.EventJavascriptDialogOpening:
		b.dialogs = append(b.dialogs, e.Message)
	case *network.EventRequestWillBeSent:
		b.requests = append(b.requests, e.Request.URL)
	}
}

func (b *browserEvents) reset() (errs, dialogs, reqs []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	errs, dialogs, reqs = b.errors, b.dialogs, b.requests
	b.errors, b.dialogs, b.requests = nil, nil, nil
	return
}

// pageFacts is what the test reads from a loaded page's DOM.
type pageFacts struct {
	Charts    int      `json:"charts"`
	Paths     int      `json:"paths"`
	Drawn     int      `json:"drawn"`
	Dots      int      `json:"dots"`
	Wide      int      `json:"wide"`
	Imgs      int      `json:"imgs"`
	Handlers  int      `json:"handlers"`
	Scripts   int      `json:"scripts"`
	HasText   bool     `json:"hasText"`
	Captions  []string `json:"captions"`
	ScrollW   int      `json:"scrollW"`
	ClientW   int      `json:"clientW"`
	Height    int      `json:"height"`
	TooWide   int      `json:"tooWide"`
	EmptyText int      `json:"emptyText"`
}

func factsScript() string {
	q, _ := json.Marshal(xss)
	return `(() => {
  const svgs = [...document.querySelectorAll('figure.chart > svg')];
  const paths = [...document.querySelectorAll('figure.chart > svg path')];
  const drawn = paths.filter(p => (p.getAttribute('d') || '').length > 3 && p.getTotalLength() > 1);
  const cw = document.documentElement.clientWidth;
  return {
    charts: svgs.length, paths: paths.length, drawn: drawn.length,
    dots: document.querySelectorAll('figure.chart > svg circle').length,
    wide: svgs.filter(s => s.getBoundingClientRect().width > 200 && s.getBoundingClientRect().height > 60).length,
    tooWide: svgs.filter(s => s.getBoundingClientRect().right > cw + 1).length,
    imgs: document.querySelectorAll('img').length,
    handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
    scripts: document.querySelectorAll('script').length,
    hasText: document.body.innerText.includes(` + string(q) + `),
    captions: [...document.querySelectorAll('figure.chart figcaption')].map(e => e.textContent),
    scrollW: document.documentElement.scrollWidth, clientW: cw,
    height: document.documentElement.scrollHeight,
    emptyText: [...document.querySelectorAll('figure.chart p.empty')].length,
  };
})()`
}

// TestReportInChromium makes real runs with the memory engine (an open
// model whose store errors carry a script-injection string, and a phases
// model), loads their report pages and the comparison page in headless
// Chromium, and checks: no console errors, no network requests, no dialog,
// charts rendered with non-empty paths, the injected string shown as text,
// no horizontal overflow at phone width, and that the page prints. The
// screenshots and the PDF are saved as test artifacts.
func TestReportInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("makes real runs and starts a browser")
	}
	chrome := chromium(t)
	out := artifacts(t)
	root := t.TempDir()
	open, phases := filepath.Join(root, "open"), filepath.Join(root, "phases")
	scalelab(t, "run", "ycsb", "--engine", "memory", "--rate", "1500/s", "--duration", "3s", "--warmup", "1s",
		"--set", "memory.error_rate=0.02", "--set", "memory.error_message="+xss, "--set", "memory.latency_jitter=2ms",
		"--out", open, "--progress", "off")
	scalelab(t, "run", "ycsb", "--engine", "memory", "--phases", "2s@20/s,2s@60/s", "--think", "0-20ms",
		"--set", "memory.latency_jitter=1ms", "--out", phases, "--progress", "off")
	cmp := filepath.Join(root, "compare.html")
	scalelab(t, "report", open, phases, "--out", cmp)
	expFile, exp := filepath.Join(root, "exp.yaml"), filepath.Join(root, "exp")
	q, _ := json.Marshal(xss)
	if err := os.WriteFile(expFile, []byte(`name: browser
scenario: ycsb
engine: memory
settings: {memory.latency: 1ms, memory.error_rate: 0.01, memory.error_message: `+string(q)+`}
load: {duration: 700ms}
factors: {users: [2, 4]}
repeats: 2
slo: [p99 < 500ms for read]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	scalelab(t, "experiment", "run", expFile, "--out", exp)
	scalelab(t, "report", exp)

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chrome), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1100, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-extensions", true))
	defer cancelAlloc()
	ev := &browserEvents{}
	ctx, cancel := chromedp.NewContext(allocCtx, chromedp.WithListener(ev.listen))
	defer cancel()
	if err := chromedp.Do(ctx); err != nil { // starts the browser, without a timeout
		t.Fatalf("start chromium: %v", err)
	}

	load := func(t *testing.T, path string, width int64) pageFacts {
		t.Helper()
		tctx, tcancel := context.WithTimeout(ctx, 60*time.Second)
		defer tcancel()
		u := (&url.URL{Scheme: "file", Path: path}).String()
		if err := chromedp.Do(tctx, chromedp.EmulateViewport(width, 900), chromedp.Navigate(u)); err != nil {
			t.Fatalf("load %s: %v", path, err)
		}
		f, err := chromedp.Run(tctx, chromedp.Evaluate[pageFacts](factsScript()))
		if err != nil {
			t.Fatalf("read the DOM: %v", err)
		}
		errs, dialogs, reqs := ev.reset()
		if len(errs) > 0 {
			t.Errorf("console errors: %q", errs)
		}
		if len(dialogs) > 0 {
			t.Errorf("the page opened a dialog (injected script ran): %q", dialogs)
		}
		for _, r := range reqs {
			if r != u {
				t.Errorf("the page requested %s: it must load nothing", r)
			}
		}
		return f
	}
	shoot := func(t *testing.T, name string, width int64, height int) {
		t.Helper()
		tctx, tcancel := context.WithTimeout(ctx, 60*time.Second)
		defer tcancel()
		if err := chromedp.Do(tctx, chromedp.EmulateViewport(width, int64(min(height, 16000)))); err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		path := filepath.Join(out, name)
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", path)
	}

	// a negative control, in a tab of its own: a page that does what a
	// report must not is caught
	t.Run("negative control", func(t *testing.T) {
		bad := filepath.Join(root, "bad.html")
		_ = os.WriteFile(bad, []byte(`<!DOCTYPE html><title>bad</title><body>`+xss+`<script>console.error("boom")</script></body>`), 0o644)
		badEv := &browserEvents{}
		tab, closeTab := chromedp.NewContext(ctx, chromedp.WithListener(badEv.listen))
		defer closeTab()
		if err := chromedp.Do(tab); err != nil {
			t.Fatal(err)
		}
		tctx, tcancel := context.WithTimeout(tab, 2*time.Second)
		defer tcancel()
		_ = chromedp.Do(tctx, chromedp.Navigate((&url.URL{Scheme: "file", Path: bad}).String())) // the alert holds the load
		errs, dialogs, reqs := badEv.reset()
		if len(errs) == 0 || len(dialogs) == 0 || len(reqs) < 2 {
			t.Errorf("the checks missed a bad page: errors %q dialogs %q requests %q", errs, dialogs, reqs)
		}
	})

	t.Run("open model run", func(t *testing.T) {
		path := filepath.Join(open, "report.html")
		f := load(t, path, 1100)
		t.Logf("facts: %+v", f)
		if f.Charts < 5 || f.Wide != f.Charts || f.Drawn+f.Dots < 2*f.Charts-2 || f.Drawn != f.Paths || f.EmptyText > 0 {
			t.Errorf("charts not rendered: %d charts (%d laid out), %d of %d paths drawn, %d empty", f.Charts, f.Wide, f.Drawn, f.Paths, f.EmptyText)
		}
		for _, want := range []string{"read: latency over time", "update: latency over time", "Throughput over time", "Errors over time", "Latency by percentile"} {
			if !contains(f.Captions, want) {
				t.Errorf("no chart %q among %q", want, f.Captions)
			}
		}
		if !f.HasText || f.Imgs != 0 || f.Handlers != 0 || f.Scripts != 0 {
			t.Errorf("the store's error message has to appear as text: text %v, %d img, %d on* attributes, %d scripts", f.HasText, f.Imgs, f.Handlers, f.Scripts)
		}
		if f.ScrollW > f.ClientW+1 {
			t.Errorf("desktop: page %d px wide in a %d px window", f.ScrollW, f.ClientW)
		}
		shoot(t, "report-desktop.png", 1100, f.Height)

		tctx, tcancel := context.WithTimeout(ctx, 60*time.Second)
		defer tcancel()
		pdf, err := chromedp.Run(tctx, chromedp.PrintToPDF(chromedp.PDFPaper(chromedp.PaperA4)))
		if err != nil || len(pdf) < 10000 || !bytes.HasPrefix(pdf, []byte("%PDF")) {
			t.Errorf("print to PDF: %d bytes, %v", len(pdf), err)
		} else {
			_ = os.WriteFile(filepath.Join(out, "report.pdf"), pdf, 0o644)
		}

		phone := load(t, path, 375)
		if phone.ScrollW > phone.ClientW+1 || phone.TooWide > 0 {
			t.Errorf("phone width: page %d px in %d px, %d charts overflow", phone.ScrollW, phone.ClientW, phone.TooWide)
		}
		shoot(t, "report-phone.png", 375, phone.Height)
	})
	t.Run("phases run", func(t *testing.T) {
		f := load(t, filepath.Join(phases, "report.html"), 1100)
		if !contains(f.Captions, "Concurrent sessions over time") || f.Drawn != f.Paths || f.Drawn == 0 {
			t.Errorf("phases page: captions %q, %d of %d paths drawn", f.Captions, f.Drawn, f.Paths)
		}
		shoot(t, "report-phases.png", 1100, f.Height)
	})
	t.Run("experiment", func(t *testing.T) {
		f := load(t, filepath.Join(exp, "report.html"), 1100)
		for _, want := range []string{"(all): throughput (ops/s)", "read: p99 latency (ms)", "(all): throughput (ops/s) against users", "read: latency by percentile"} {
			if !contains(f.Captions, want) {
				t.Errorf("no chart %q among %q", want, f.Captions)
			}
		}
		if f.Drawn != f.Paths || f.Charts < 6 || f.Wide != f.Charts || !f.HasText || f.Imgs != 0 || f.Handlers != 0 {
			t.Errorf("experiment page: %+v", f)
		}
		shoot(t, "experiment.png", 1100, f.Height)
		if phone := load(t, filepath.Join(exp, "report.html"), 375); phone.ScrollW > phone.ClientW+1 || phone.TooWide > 0 {
			t.Errorf("phone width: page %d px in %d px, %d charts overflow", phone.ScrollW, phone.ClientW, phone.TooWide)
		}
	})
	t.Run("comparison", func(t *testing.T) {
		f := load(t, cmp, 1100)
		if f.Charts < 3 || f.Drawn != f.Paths || f.Drawn < 4 || !contains(f.Captions, "read: latency by percentile") {
			t.Errorf("compare page: %d charts, %d of %d paths drawn, captions %q", f.Charts, f.Drawn, f.Paths, f.Captions)
		}
		shoot(t, "compare.png", 1100, f.Height)
		if phone := load(t, cmp, 375); phone.ScrollW > phone.ClientW+1 || phone.TooWide > 0 {
			t.Errorf("phone width: page %d px in %d px, %d charts overflow", phone.ScrollW, phone.ClientW, phone.TooWide)
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
