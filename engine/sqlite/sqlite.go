// Package sqlite is the "sqlite" engine, scalelab's default: an embedded
// SQLite database file opened with the pure-Go driver modernc.org/sqlite (no
// cgo, nothing to install). Its settings map to PRAGMAs applied to every
// pooled connection.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/setting"
)

// Name is the engine's registry name.
const Name = "sqlite"

// DefaultFile is the database file name used in the results directory when
// no target is given.
const DefaultFile = "sqlite.db"

// Setting keys of the sqlite engine.
const (
	KeyJournalMode = "sqlite.journal_mode"
	KeySynchronous = "sqlite.synchronous"
	KeyBusyTimeout = "sqlite.busy_timeout"
	KeyCacheSize   = "sqlite.cache_size"
	KeyMaxConns    = "sqlite.max_conns"
)

func init() { engine.Register(&Engine{}) }

// Engine is the sqlite engine. Its zero value is ready to use.
type Engine struct{}

// Name returns "sqlite".
func (*Engine) Name() string { return Name }

// ProcessLocal is true without a target: the database file is made in
// the run's own results directory.
func (*Engine) ProcessLocal(target string) bool { return target == "" }

// Embedded reports that the store runs inside scalelab (SQLite is a
// library), whatever the target file.
func (*Engine) Embedded() bool { return true }

// FileTarget reports that the store is the file the target names.
func (*Engine) FileTarget() bool { return true }

// Description is one line for `scalelab list`.
func (*Engine) Description() string {
	return "embedded SQLite database file (pure-Go driver, the default engine); target: file path"
}

// Settings declares the PRAGMA settings and the connection pool size.
func (*Engine) Settings() []setting.Spec {
	return []setting.Spec{
		{Key: KeyJournalMode, Kind: setting.Enum, Default: "wal", Allowed: []string{"wal", "delete", "truncate", "memory", "off"},
			Description: "PRAGMA journal_mode"},
		{Key: KeySynchronous, Kind: setting.Enum, Default: "normal", Allowed: []string{"off", "normal", "full", "extra"},
			Description: "PRAGMA synchronous"},
		{Key: KeyBusyTimeout, Kind: setting.Duration, Default: "5s", Min: 0, Max: 24 * 3600,
			Description: "PRAGMA busy_timeout: how long a statement waits for a lock before failing with SQLITE_BUSY (class rejected)"},
		{Key: KeyCacheSize, Kind: setting.Size, Default: "64MiB", Min: 0, Max: 1 << 40,
			Description: "PRAGMA cache_size, per connection (page cache limit)"},
		{Key: KeyMaxConns, Kind: setting.Int, Default: "0", Min: 0, Max: 4096,
			Description: "connection pool size; 0 means 4 x GOMAXPROCS (at least 4): SQLite reads in parallel but writes one at a time"},
		engine.ReplaceExistingSpec(Name),
	}
}

// Options are the resolved engine settings.
type Options struct {
	JournalMode string        // wal|delete|truncate|memory|off
	Synchronous string        // off|normal|full|extra
	BusyTimeout time.Duration // PRAGMA busy_timeout
	CacheSize   int64         // bytes, per connection
	MaxConns    int           // pool size; 0 means DefaultMaxConns()
	// ReplaceExisting lets Claim drop a table of a scenario's name that
	// scalelab did not create.
	ReplaceExisting bool
}

// DefaultOptions returns the settings' defaults.
func DefaultOptions() Options {
	return optionsFrom(nil)
}

// DefaultMaxConns is the pool size used when sqlite.max_conns is 0:
// 4 x GOMAXPROCS, at least 4.
func DefaultMaxConns() int { return max(4, 4*runtime.GOMAXPROCS(0)) }

func optionsFrom(set *setting.Set) Options {
	get := setting.Getter(set, (&Engine{}).Settings())
	return Options{
		JournalMode: get(KeyJournalMode).String(),
		Synchronous: get(KeySynchronous).String(),
		BusyTimeout: get(KeyBusyTimeout).Duration(),
		CacheSize:   get(KeyCacheSize).Int(),
		MaxConns:    int(get(KeyMaxConns).Int()),

		ReplaceExisting: get(KeyReplaceExisting).Bool(),
	}
}

// DSN returns the driver data source name for path: the file name followed
// by one _pragma parameter per option, which the driver runs on every new
// connection (busy_timeout first).
func (o Options) DSN(path string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode("+o.JournalMode+")")
	q.Add("_pragma", "synchronous("+o.Synchronous+")")
	q.Add("_pragma", fmt.Sprintf("cache_size(%d)", -(o.CacheSize>>10)))
	return path + "?" + q.Encode()
}

// Open opens (creating if needed) the database file cfg.Target, or
// sqlite.db in cfg.Dir when the target is empty, and checks that it is
// usable. Failures wrap engine.ErrUnreachable.
func (e *Engine) Open(ctx context.Context, cfg engine.Config) (engine.Conn, error) {
	c, err := OpenFile(ctx, e.StoreFile(cfg), optionsFrom(cfg.Settings))
	if err != nil {
		return nil, err
	}
	c.scenario, c.run = cfg.Scenario, cfg.Run
	return c, nil
}

var _ engine.StoreFiler = (*Engine)(nil)

// StoreFile returns the database file Open opens: cfg.Target, or
// sqlite.db in cfg.Dir when the target is empty.
func (*Engine) StoreFile(cfg engine.Config) string {
	if cfg.Target == "" {
		return filepath.Join(cfg.Dir, DefaultFile)
	}
	return cfg.Target
}

var _ engine.TargetChecker = (*Engine)(nil)

// CheckTarget refuses a target that is not a plain file path, or whose
// directory does not exist.
func (*Engine) CheckTarget(path string) error {
	if strings.ContainsRune(path, '?') {
		return fmt.Errorf("open sqlite %s: %w: the file path must not contain '?'", path, engine.ErrConfig)
	}
	if strings.HasPrefix(path, "file:") {
		return fmt.Errorf("open sqlite %s: %w: give a plain file path, not a file: URI", path, engine.ErrConfig)
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("open sqlite %s: %w: its directory %s does not exist; create it (mkdir -p %s) or name a file in a directory that exists", path, engine.ErrConfig, dir, dir)
		}
		return fmt.Errorf("open sqlite %s: %w: its directory: %w", path, engine.ErrConfig, err)
	} else if !fi.IsDir() {
		return fmt.Errorf("open sqlite %s: %w: %s is not a directory", path, engine.ErrConfig, dir)
	}
	return nil
}

// OpenFile opens the database file at path with the given options.
func OpenFile(ctx context.Context, path string, o Options) (*Conn, error) {
	if err := (*Engine)(nil).CheckTarget(path); err != nil {
		return nil, err
	}
	n := o.MaxConns
	if n <= 0 {
		n = DefaultMaxConns()
	}
	db, err := sql.Open("sqlite", o.DSN(path))
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w: %w", path, engine.ErrUnreachable, err)
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n) // keep connections: each new one reruns the pragmas
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w: %w", path, engine.ErrUnreachable, err)
	}
	return &Conn{db: db, path: path, maxConns: n, replace: o.ReplaceExisting}, nil
}

// Conn is an open SQLite database: a database/sql pool whose connections
// all carry the engine's pragmas.
type Conn struct {
	db       *sql.DB
	path     string
	maxConns int
	replace  bool   // sqlite.replace_existing (Claim)
	scenario string // the scenario and run named in the marks (MarkTables)
	run      string
}

// DB returns the connection pool. Scenarios prepare their statements on it.
func (c *Conn) DB() *sql.DB { return c.db }

// Path returns the database file path.
func (c *Conn) Path() string { return c.path }

// MaxConns returns the pool size in effect.
func (c *Conn) MaxConns() int { return c.maxConns }

// Statements is the pool's size: SQLite runs in this process
// (engine.StatementPool).
func (c *Conn) Statements() int { return c.maxConns }

// Close closes the pool.
func (c *Conn) Close() error { return c.db.Close() }

var synchronousNames = map[string]string{"0": "off", "1": "normal", "2": "full", "3": "extra"}

// Info reports the SQLite version and, in Extra, the pragmas in effect as
// read back from a pooled connection.
func (c *Conn) Info(ctx context.Context) (engine.Info, error) {
	info := engine.Info{Engine: Name, Target: c.path, Extra: map[string]string{
		"max_conns": strconv.Itoa(c.maxConns),
	}}
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return info, fmt.Errorf("sqlite info: %w", err)
	}
	defer conn.Close()
	if err := conn.QueryRowContext(ctx, "select sqlite_version()").Scan(&info.Version); err != nil {
		return info, fmt.Errorf("sqlite info: %w", err)
	}
	for _, p := range []string{"journal_mode", "synchronous", "busy_timeout", "cache_size", "page_size"} {
		var v string
		if err := conn.QueryRowContext(ctx, "pragma "+p).Scan(&v); err != nil {
			return info, fmt.Errorf("sqlite info: pragma %s: %w", p, err)
		}
		switch p {
		case "synchronous":
			if name, ok := synchronousNames[v]; ok {
				v = name
			}
		case "busy_timeout":
			if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
				v = (time.Duration(ms) * time.Millisecond).String()
			}
		}
		info.Extra[p] = v
	}
	return info, nil
}

// Classify gives err its outcome class: SQLITE_BUSY and SQLITE_LOCKED (a
// lock not obtained within busy_timeout) are metrics.Rejected; a constraint
// violation (such as inserting an existing primary key) is metrics.Other, as
// is any other SQLite error; an error after ctx ended (SQLITE_INTERRUPT, or
// the context's error itself) is joined with ctx.Err(), so a deadline is
// metrics.Timeout. nil stays nil.
func Classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ended, e := engine.Ended(ctx, err); ended {
		return e
	}
	var se *msqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return metrics.WithClass(metrics.Rejected, err)
		}
	}
	return err
}

// Code returns the primary SQLite result code in err's chain (SQLITE_BUSY
// is 5, SQLITE_CONSTRAINT 19...), or 0 when err is not a SQLite error.
func Code(err error) int {
	var se *msqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// IsConstraint reports whether err is a constraint violation, such as a
// duplicate primary key.
func IsConstraint(err error) bool { return Code(err) == sqlite3.SQLITE_CONSTRAINT }
