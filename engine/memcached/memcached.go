// Package memcached is the "memcached" engine: memcached servers reached
// through gomemcache (its text protocol), with more idle connections and
// a longer timeout than gomemcache's defaults so that it holds a load.
// Records are one item each, keyed by namespace, collection and
// generation (records.go); memcached cannot list its keys, so the
// collections have no scans, counts or highest key (engine.Traits
// NoScans). cluster.go provisions local servers from Debian's memcached.
package memcached

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/netdial"
	"github.com/scalelab/scalelab/setting"
)

// Name is the engine's registry name.
const Name = "memcached"

// Setting keys of the memcached engine.
const (
	KeyMaxIdleConns = "memcached.max_idle_conns"
	KeyTimeout      = "memcached.timeout"
	KeyNamespace    = "memcached.namespace"
)

func init() { engine.Register(&Engine{}) }

// Engine is the memcached engine. Its zero value is ready to use.
type Engine struct{}

var _ engine.TargetChecker = (*Engine)(nil)

// Name returns "memcached".
func (*Engine) Name() string { return Name }

// TargetForm is how a target names the servers.
func (*Engine) TargetForm() (form, env string) { return "memcached://host:port[,host:port...]", "" }

// Description is one line for `scalelab list`.
func (*Engine) Description() string {
	return "memcached servers through gomemcache, one item per record (no scans or counts: ycsb a-d and f, social d2, a cache tier); target: memcached://host:port[,host:port...] (no authentication), or --cluster NAME"
}

// HasRecords reports true: the engine's connections implement
// engine.Records.
func (*Engine) HasRecords() bool { return true }

var validNamespace = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,40}$`)

// Settings declares the connection and key settings.
func (*Engine) Settings() []setting.Spec {
	return []setting.Spec{
		{Key: KeyMaxIdleConns, Kind: setting.Int, Default: "64", Min: 1, Max: 100000,
			Description: "idle connections kept per server (gomemcache keeps 2: under load every operation beyond them would open and close a connection)"},
		{Key: KeyTimeout, Kind: setting.Duration, Default: "1s", Min: 0.001, Max: 3600,
			Description: "how long connecting, and each read or write of an operation, may take (gomemcache's default is 500ms)"},
		{Key: KeyNamespace, Kind: setting.String, Default: "scalelab",
			Check: func(v setting.Value) error {
				if !validNamespace.MatchString(v.Raw) {
					return errors.New("1 to 40 letters, digits, '_', '.' or '-'")
				}
				return nil
			},
			Description: "first part of every key the engine writes (NAMESPACE:collection:generation:key)"},
	}
}

// Options are the resolved engine settings.
type Options struct {
	MaxIdleConns int
	Timeout      time.Duration
	Namespace    string
}

// OptionsFrom reads the engine settings from set (defaults for keys it
// lacks; nil gives every default).
func OptionsFrom(set *setting.Set) Options {
	get := setting.Getter(set, (&Engine{}).Settings())
	return Options{
		MaxIdleConns: int(get(KeyMaxIdleConns).Int()),
		Timeout:      get(KeyTimeout).Duration(),
		Namespace:    get(KeyNamespace).String(),
	}
}

// ErrConfig is wrapped by errors about a target or settings that cannot
// work.
var ErrConfig = fmt.Errorf("memcached: %w", engine.ErrConfig)

// ParseTarget parses memcached://host:port[,host:port...] or
// host:port[,host:port...] into the servers' addresses. A user or a
// password is refused: the engine speaks to memcached without
// authentication. Its errors never quote the target.
func ParseTarget(target string) ([]string, error) {
	if target == "" {
		return nil, fmt.Errorf("%w: no server given: use --target memcached://host:port[,host:port...] or --cluster NAME (see `scalelab cluster up memcached`)", ErrConfig)
	}
	rest := target
	if scheme, after, ok := strings.Cut(target, "://"); ok {
		if scheme != "memcached" {
			return nil, fmt.Errorf("%w: target: scheme %q; use memcached://host:port[,host:port...]", ErrConfig, scheme)
		}
		rest = strings.TrimSuffix(after, "/")
	}
	if strings.ContainsAny(rest, "@/?#") {
		return nil, fmt.Errorf("%w: target: only host:port[,host:port...] is taken (the engine uses no authentication: no user or password)", ErrConfig)
	}
	var addrs []string
	for _, a := range strings.Split(rest, ",") {
		a = strings.TrimSpace(a)
		host, port, err := net.SplitHostPort(a)
		if err != nil || host == "" {
			return nil, fmt.Errorf("%w: target: a server is not host:port", ErrConfig)
		}
		if p, err := strconv.ParseUint(port, 10, 16); err != nil || p == 0 {
			return nil, fmt.Errorf("%w: target: bad port %q", ErrConfig, port)
		}
		addrs = append(addrs, a)
	}
	return addrs, nil
}

// CheckTarget checks the form of a target without connecting.
func (*Engine) CheckTarget(target string) error {
	_, err := ParseTarget(target)
	return err
}

// Open connects to cfg.Target or the --cluster's server and checks that
// every server answers. Connection failures wrap engine.ErrUnreachable.
func (*Engine) Open(ctx context.Context, cfg engine.Config) (engine.Conn, error) {
	target := cfg.Target
	if target == "" && cfg.Cluster != nil {
		target = cfg.Cluster.Target
	}
	addrs, err := ParseTarget(target)
	if err != nil {
		return nil, err
	}
	return Connect(ctx, addrs, OptionsFrom(cfg.Settings))
}

// Connect makes a client of the servers at addrs (keys spread over them
// by gomemcache's hash) and checks that each answers.
func Connect(ctx context.Context, addrs []string, o Options) (*Conn, error) {
	mc := memcache.New(addrs...)
	mc.MaxIdleConns, mc.Timeout = o.MaxIdleConns, o.Timeout
	mc.DialContext = netdial.Dialer{Timeout: o.Timeout}.DialContext
	c := &Conn{mc: mc, addrs: addrs, opts: o}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := mc.Ping(); err != nil {
		mc.Close()
		return nil, fmt.Errorf("memcached %s: %w: %w", strings.Join(addrs, ","), engine.ErrUnreachable, Classify(ctx, wrap(err)))
	}
	return c, nil
}

// Conn is an open memcached engine: a client of one or more servers.
type Conn struct {
	mc    *memcache.Client
	addrs []string
	opts  Options
}

// Client returns the gomemcache client.
func (c *Conn) Client() *memcache.Client { return c.mc }

// Options returns the settings in effect.
func (c *Conn) Options() Options { return c.opts }

// Close closes the client's idle connections.
func (c *Conn) Close() error { return c.mc.Close() }

// Info reports the server version and the server settings that shape
// results (memory limit, threads, eviction), beside the client's.
func (c *Conn) Info(ctx context.Context) (engine.Info, error) {
	info := engine.Info{Engine: Name, Target: "memcached://" + strings.Join(c.addrs, ","), Extra: map[string]string{
		"servers":        strconv.Itoa(len(c.addrs)),
		"max_idle_conns": strconv.Itoa(c.opts.MaxIdleConns),
		"timeout":        c.opts.Timeout.String(),
		"namespace":      c.opts.Namespace,
	}}
	stats, err := Stats(ctx, c.addrs[0], c.opts.Timeout, "")
	if err != nil {
		return info, fmt.Errorf("memcached info: %w", err)
	}
	info.Version = "memcached " + stats["version"]
	for k, v := range map[string]string{"limit_maxbytes": stats["limit_maxbytes"], "threads": stats["threads"], "max_connections": stats["max_connections"]} {
		if v != "" {
			info.Extra[k] = v
		}
	}
	if settings, err := Stats(ctx, c.addrs[0], c.opts.Timeout, "settings"); err == nil {
		for _, k := range []string{"evictions", "item_size_max"} {
			if v, ok := settings[k]; ok {
				info.Extra[k] = v
			}
		}
	}
	return info, nil
}
