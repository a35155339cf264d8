// Command scalelab-ferretdb runs FerretDB v1, a MongoDB-wire server written
// in Go, on one address with an SQLite or PostgreSQL backend. scalelab's
// local clusters (`scalelab cluster up ferretdb`) and the mongodb engine's
// tests start it. It lives in a module of its own so that FerretDB and its
// dependencies stay out of scalelab's build.
//
// Once it listens it prints "listening ADDR" on standard output; it stops
// on SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/build/version"
	"github.com/FerretDB/FerretDB/ferretdb"
)

const module = "github.com/FerretDB/FerretDB"

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on")
	backend := flag.String("backend", "sqlite", "storage backend: sqlite or postgresql")
	dir := flag.String("dir", "", "data directory of the sqlite backend (required with it)")
	pgURL := flag.String("postgresql-url", "", "PostgreSQL URL of the postgresql backend (without a password: the clients' credentials are used)")
	logLevel := flag.String("log-level", "warn", "log level: debug, info, warn or error")
	exitWith := flag.Int("exit-with-pid", 0, "stop when the process of this id ends (0: never)")
	flag.Parse()
	if *exitWith > 0 {
		go watch(*exitWith)
	}
	if err := run(*listen, *backend, *dir, *pgURL, *logLevel); err != nil {
		fmt.Fprintln(os.Stderr, "scalelab-ferretdb:", err)
		os.Exit(1)
	}
}

func run(listen, backend, dir, pgURL, logLevel string) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(logLevel)); err != nil {
		return fmt.Errorf("--log-level %q: %w", logLevel, err)
	}
	cfg := &ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: listen},
		Logger:   slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
	}
	switch backend {
	case "sqlite":
		if dir == "" {
			return fmt.Errorf("--dir is required with --backend sqlite")
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("data directory: %w", err)
		}
		cfg.Handler = "sqlite"
		cfg.SQLiteURL = "file:" + strings.TrimSuffix(dir, "/") + "/"
	case "postgresql":
		if pgURL == "" {
			return fmt.Errorf("--postgresql-url is required with --backend postgresql")
		}
		cfg.Handler = "postgresql"
		cfg.PostgreSQLURL = pgURL
	default:
		return fmt.Errorf("--backend %q: allowed: sqlite, postgresql", backend)
	}
	describe(backend)
	f, err := ferretdb.New(cfg)
	if err != nil {
		return fmt.Errorf("start ferretdb: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	// MongoDBURI waits until the listener is up.
	fmt.Printf("listening %s\n", f.MongoDBURI())
	return <-done
}

// watch ends this server once process pid is gone (a test binary that
// started it and died).
func watch(pid int) {
	for {
		time.Sleep(time.Second)
		if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
			fmt.Fprintf(os.Stderr, "scalelab-ferretdb: process %d is gone; stopping\n", pid)
			_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
			return
		}
	}
}

// describe makes buildInfo tell clients which FerretDB this is: its module
// version (an embedded FerretDB reports "unknown") and its backend.
func describe(backend string) {
	info := version.Get()
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == module {
				info.Version = d.Version
			}
		}
	}
	info.BuildEnvironment.Set("backend", backend)
}
