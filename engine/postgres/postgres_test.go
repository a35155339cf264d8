package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/setting"
)

func TestSettings(t *testing.T) {
	t.Parallel()
	e, err := engine.Lookup(Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range e.Settings() {
		if !strings.HasPrefix(sp.Key, Name+".") || sp.Description == "" {
			t.Errorf("bad spec %+v", sp)
		}
	}
	o := OptionsFrom(nil)
	if o.PoolSize != DefaultPoolSize() || !o.Prepared || !o.Copy || o.ReadFrom != "primary" || o.TLS != "off" || o.RYWWindow.Seconds() != 2 || len(o.Replicas) != 0 {
		t.Errorf("defaults: %+v", o)
	}
	set := setting.NewSet(e.Settings()...)
	for _, a := range []string{"postgres.replicas= 127.0.0.1:5433 ,127.0.0.1:5434", "postgres.pool_size=7", "postgres.synchronous_commit=off"} {
		if err := set.Apply(a); err != nil {
			t.Fatal(err)
		}
	}
	o = OptionsFrom(set)
	if len(o.Replicas) != 2 || o.Replicas[1] != "127.0.0.1:5434" || o.PoolSize != 7 || o.SynchronousCommit != "off" {
		t.Errorf("options: %+v", o)
	}
	if err := set.Apply("postgres.read_from=replica"); err == nil || !strings.Contains(err.Error(), `did you mean "replicas"`) {
		t.Errorf("bad read_from: %v", err)
	}
}

func TestTargetRules(t *testing.T) {
	ctx := context.Background()
	t.Setenv("PGHOST", "")
	for _, tc := range []struct {
		target string
		want   string
	}{
		{"", "no server given"},
		{"postgres://u:secret@127.0.0.1:1/db", "holds a password"},
		{"postgres://u@127.0.0.1:1/db?password=secret", "holds a password"},
		{"host=127.0.0.1 password=secret", "holds a password"},
	} {
		_, err := Connect(ctx, tc.target, "", OptionsFrom(nil))
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("target %q: %v", tc.target, err)
		}
	}
	// A closed port is unreachable, classed refused.
	enginetest.NothingListening(t, func(addr string) error {
		_, err := Connect(ctx, "postgres://u@"+addr+"/db", "", OptionsFrom(nil))
		return err
	})
	// A world-readable password file is refused.
	pw := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pw, []byte("x\n"), 0o644)
	e, _ := engine.Lookup(Name)
	set := setting.NewSet(e.Settings()...)
	set.Apply(KeyPasswordFile + "=" + pw)
	if _, err := e.Open(ctx, engine.Config{Target: "postgres://u@127.0.0.1:1/db", Settings: set}); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Errorf("0644 password file: %v", err)
	}
	// A CA file without TLS is a mistake.
	o := OptionsFrom(nil)
	o.TLSCAFile = pw
	if _, err := Connect(ctx, "postgres://u@127.0.0.1:1/db", "", o); !errors.Is(err, ErrConfig) {
		t.Errorf("CA file with tls=off: %v", err)
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for code, want := range map[string]metrics.Class{
		"40001": metrics.Rejected, "40P01": metrics.Rejected, "53300": metrics.Rejected, "55P03": metrics.Rejected,
		"57P03": metrics.Refused, "57P01": metrics.Refused, "57014": metrics.Timeout, "23505": metrics.Other,
	} {
		err := Classify(ctx, fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: code}))
		if got := metrics.ClassOf(err); got != want {
			t.Errorf("SQLSTATE %s: class %v, want %v", code, got, want)
		}
		if SQLState(err) != code {
			t.Errorf("SQLState %q", SQLState(err))
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := Classify(cctx, errors.New("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("after cancel: %v", err)
	}
	if Classify(ctx, nil) != nil {
		t.Error("nil classified")
	}
}

func TestParseSpec(t *testing.T) {
	t.Parallel()
	good := cluster.Spec{Replicas: 2, Nodes: 3, Options: map[string]string{"fsync": "off", "tls": "on", "work_mem": "8MB", "auto_explain.log_min_duration": "1s"}}
	c, err := parseSpec(good)
	if err != nil || !c.tls || c.replicas != 2 {
		t.Fatalf("%+v %v", c, err)
	}
	if last := c.settings[len(c.settings)-1]; last != [2]string{"work_mem", "8MB"} {
		t.Errorf("settings end with %v", last)
	}
	for _, bad := range []cluster.Spec{
		{Nodes: 2},
		{Heap: "1g"},
		{Options: map[string]string{"listen_addresses": "*"}},
		{Options: map[string]string{"ssl": "on"}},
		{Options: map[string]string{"tls": "maybe"}},
		{Options: map[string]string{"Bad Name": "1"}},
	} {
		if _, err := parseSpec(bad); err == nil {
			t.Errorf("spec %+v accepted", bad)
		}
	}
}

func TestBinDir(t *testing.T) {
	t.Setenv(BinDirEnv, t.TempDir())
	if _, err := BinDir(); !errors.Is(err, ErrNoBinaries) || !strings.Contains(err.Error(), "apt-get install -y postgresql") {
		t.Errorf("missing binaries: %v", err)
	}
}

func TestRouter(t *testing.T) {
	t.Parallel()
	p0, p1, p2 := &pgxpool.Pool{}, &pgxpool.Pool{}, &pgxpool.Pool{}
	c := &Conn{primary: p0, replicas: []*pgxpool.Pool{p1, p2}, opts: Options{ReadFrom: "replicas", RYWWindow: time.Hour}}
	r1, r2 := c.NewRouter(), c.NewRouter()
	if p, primary := r1.Reader(); p != p1 || primary {
		t.Errorf("first user reads %p (primary %t), want the first replica", p, primary)
	}
	if p, _ := r2.Reader(); p != p2 {
		t.Error("second user does not read the second replica")
	}
	if r1.Writer() != p0 {
		t.Error("writes must go to the primary")
	}
	r1.Wrote()
	if p, primary := r1.Reader(); p != p0 || !primary {
		t.Error("a read within the window after the user's write must go to the primary")
	}
	if p, primary := r1.OthersReader(); p != p1 || primary {
		t.Error("others see the user's writes through the replica")
	}
	if p, _ := r2.Reader(); p != p2 {
		t.Error("another user's write moved this user's reads")
	}
	if c.ReadPool() == p0 {
		t.Error("ReadPool with replicas gave the primary")
	}
	// No window: reads stay on the replica; read_from=primary: always the primary.
	c.opts.RYWWindow = 0
	r3 := c.NewRouter()
	r3.Wrote()
	if _, primary := r3.Reader(); primary {
		t.Error("ryw_window=0 still sent the read to the primary")
	}
	c.opts.ReadFrom = "primary"
	if p, primary := c.NewRouter().Reader(); p != p0 || !primary || c.ReadPool() != p0 {
		t.Error("read_from=primary read elsewhere")
	}
	// Safe for concurrent use (run with -race).
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				r1.Wrote()
				r1.Reader()
			}
		}()
	}
	wg.Wait()
}
