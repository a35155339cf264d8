// Package linkemu emulates the delay and jitter of network links where the
// kernel cannot (no sch_netem): a TCP proxy per link, from the Toxiproxy
// library, run by a small server process per cluster that outlives the
// command which started it. Each proxy forwards one path (the load
// generator to a node, or one node to another) and carries a latency
// toxic per direction; faults change those toxics during a run or stall a
// proxy's data (a partition between groups that crosses it).
//
// The server is the scalelab binary itself (or any binary that links this
// package, test binaries included): started with SCALELAB_LINKS_SERVE set
// to the cluster's state directory, it serves instead of running main,
// and exits when that directory's cluster.json is gone or on SIGTERM.
package linkemu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Environment of the server process.
const (
	EnvServe = "SCALELAB_LINKS_SERVE" // the cluster's state directory
	EnvAPI   = "SCALELAB_LINKS_API"   // host:port of the server's HTTP API
)

func init() {
	if dir := os.Getenv(EnvServe); dir != "" {
		if err := serve(dir, os.Getenv(EnvAPI), os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "links server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// serve runs the proxies' server until SIGTERM or until dir/cluster.json
// is gone (a cluster removed without stopping it).
func serve(dir, api string, log io.Writer) error {
	if api == "" {
		return errors.New(EnvAPI + " is not set")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	logger := zerolog.New(log).With().Timestamp().Logger().Level(zerolog.WarnLevel)
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), logger)
	errc := make(chan error, 1)
	go func() { errc <- srv.Listen(api) }()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-errc:
			return fmt.Errorf("serve %s: %w", api, err)
		case <-ctx.Done():
			_ = srv.Collection.Clear()
			return srv.Shutdown()
		case <-tick.C:
			if _, err := os.Stat(filepath.Join(dir, "cluster.json")); errors.Is(err, os.ErrNotExist) {
				_ = srv.Collection.Clear()
				return srv.Shutdown()
			}
		}
	}
}

// Start runs the server for the cluster whose state is in dir, its API on
// api (a free loopback port), its log in dir/links.log, in a session of
// its own so that it outlives the command; it returns the server's PID
// once the API answers.
func Start(dir, api string) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("links server: find the scalelab binary: %w", err)
	}
	logf, err := os.OpenFile(filepath.Join(dir, "links.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, fmt.Errorf("links server: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), EnvServe+"="+dir, EnvAPI+"="+api)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("links server: %w", err)
	}
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	c := Dial(api)
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := c.c.Version(); err == nil {
			return pid, nil
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(filepath.Join(dir, "links.log"))
			return 0, fmt.Errorf("links server exited at start: %s", strings.TrimSpace(lastLines(string(b), 5)))
		default:
		}
		if time.Now().After(end) {
			_ = cmd.Process.Kill()
			return 0, fmt.Errorf("links server: its API on %s did not answer within 10 s", api)
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Client drives a running server.
type Client struct{ c *toxiclient.Client }

// Dial returns a client of the server whose API is on api.
func Dial(api string) *Client { return &Client{c: toxiclient.NewClient(api)} }

// Add makes a proxy named name listening on listen (host:port) that
// forwards to upstream.
func (c *Client) Add(name, listen, upstream string) error {
	if _, err := c.c.CreateProxy(name, listen, upstream); err != nil {
		return fmt.Errorf("proxy %s (%s to %s): %w", name, listen, upstream, err)
	}
	return nil
}

// Delay is the latency a proxy adds to each direction (one way, as
// netem's delay): Delay ± Jitter, in whole milliseconds.
type Delay struct {
	Delay, Jitter time.Duration
}

// IsZero reports whether the delay adds nothing.
func (d Delay) IsZero() bool { return d.Delay == 0 && d.Jitter == 0 }

// SetDelay sets the proxy's delay each way; a zero Delay removes it.
func (c *Client) SetDelay(name string, d Delay) error {
	return c.eachWay(name, func(p *toxiclient.Proxy, stream string) error {
		tox := "delay_" + stream
		_ = p.RemoveToxic(tox)
		if d.IsZero() {
			return nil
		}
		attrs := toxiclient.Attributes{"latency": d.Delay.Milliseconds(), "jitter": d.Jitter.Milliseconds()}
		if _, err := p.AddToxic(tox, "latency", stream, 1, attrs); err != nil {
			return fmt.Errorf("proxy %s: delay %s: %w", name, d.Delay, err)
		}
		return nil
	})
}

// Stall stops every byte through the proxy, each way, without closing
// its connections (a partition across it); Unstall lets data flow again.
func (c *Client) Stall(name string) error {
	return c.eachWay(name, func(p *toxiclient.Proxy, stream string) error {
		if _, err := p.AddToxic("stall_"+stream, "timeout", stream, 1, toxiclient.Attributes{"timeout": 0}); err != nil && !strings.Contains(err.Error(), "already exists") {
			return fmt.Errorf("proxy %s: stall: %w", name, err)
		}
		return nil
	})
}

// Unstall undoes Stall.
func (c *Client) Unstall(name string) error {
	return c.eachWay(name, func(p *toxiclient.Proxy, stream string) error {
		if err := p.RemoveToxic("stall_" + stream); err != nil && !strings.Contains(err.Error(), "not found") {
			return fmt.Errorf("proxy %s: unstall: %w", name, err)
		}
		return nil
	})
}

// eachWay finds the proxy name and calls f for its upstream, then for
// its downstream, stopping at the first error.
func (c *Client) eachWay(name string, f func(p *toxiclient.Proxy, stream string) error) error {
	p, err := c.c.Proxy(name)
	if err != nil {
		return fmt.Errorf("proxy %s: %w", name, err)
	}
	for _, stream := range []string{"upstream", "downstream"} {
		if err := f(p, stream); err != nil {
			return err
		}
	}
	return nil
}

// Toxics lists a proxy's toxics as "name:type" (for status and tests).
func (c *Client) Toxics(name string) ([]string, error) {
	p, err := c.c.Proxy(name)
	if err != nil {
		return nil, fmt.Errorf("proxy %s: %w", name, err)
	}
	ts, err := p.Toxics()
	if err != nil {
		return nil, fmt.Errorf("proxy %s: %w", name, err)
	}
	var out []string
	for _, t := range ts {
		out = append(out, fmt.Sprintf("%s:%s:%v", t.Name, t.Type, t.Attributes))
	}
	return out, nil
}

// Up reports whether the server answers.
func (c *Client) Up() bool {
	_, err := c.c.Version()
	return err == nil
}
