// Package redis is the "redis" engine: a Redis server reached through a
// go-redis (v9) connection pool. Records are hashes, with a sorted set of
// keys per collection for scans, counts and the highest key (records.go);
// cluster.go provisions local servers from Debian's redis-server.
package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/netdial"
	"github.com/scalelab/scalelab/setting"
)

// Name is the engine's registry name.
const Name = "redis"

// Setting keys of the redis engine.
const (
	KeyPoolSize       = "redis.pool_size"
	KeyTimeout        = "redis.timeout"
	KeyConnectTimeout = "redis.connect_timeout"
	KeyPrefix         = "redis.prefix"
	KeyPasswordFile   = "redis.password_file"
	// KeyReplaceExisting lets a run delete the keys of a collection that
	// scalelab did not create (Collection).
	KeyReplaceExisting = "redis." + engine.ReplaceExistingKey
)

// PasswordEnv is the environment variable holding the password, as
// redis-cli reads it.
const PasswordEnv = "REDISCLI_AUTH"

// DefaultPort is the port of a target that names none.
const DefaultPort = "6379"

func init() {
	engine.Register(&Engine{})
	// go-redis logs failed dials to stderr; scalelab reports errors itself.
	goredis.SetLogger(quiet{})
}

// quiet is a go-redis logger that drops every line.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// Engine is the redis engine. Its zero value is ready to use.
type Engine struct{}

var _ engine.TargetChecker = (*Engine)(nil)

// Name returns "redis".
func (*Engine) Name() string { return Name }

// TargetForm is how a target names the server.
func (*Engine) TargetForm() (form, env string) { return "redis://host:port[/db]", "" }

// Description is one line for `scalelab list`.
func (*Engine) Description() string {
	return "Redis server through a go-redis pool, records as hashes with a sorted set of keys; target: redis://[user@]host:port[/db] (the password from REDISCLI_AUTH or redis.password_file, never in the target), or --cluster NAME"
}

// HasRecords reports true: the engine's connections implement
// engine.Records.
func (*Engine) HasRecords() bool { return true }

var validPrefix = regexp.MustCompile(`^[A-Za-z0-9_.:-]{0,64}$`)

// Settings declares the pool, timeout and key settings.
func (*Engine) Settings() []setting.Spec {
	return []setting.Spec{
		{Key: KeyPoolSize, Kind: setting.Int, Default: "0", Min: 0, Max: 10000,
			Description: "connections in the pool; 0 means max(64, 10 x GOMAXPROCS); the pool opens them as users need them"},
		{Key: KeyTimeout, Kind: setting.Duration, Default: "10s", Min: 0.001, Max: 3600,
			Description: "how long one command may wait for its reply (and for a free connection of the pool)"},
		{Key: KeyConnectTimeout, Kind: setting.Duration, Default: "10s", Min: 0.001, Max: 3600,
			Description: "how long to wait for a new connection"},
		{Key: KeyPrefix, Kind: setting.String, Default: "scalelab:",
			Check: func(v setting.Value) error {
				if !validPrefix.MatchString(v.Raw) {
					return errors.New("up to 64 letters, digits, '_', '.', ':' or '-'")
				}
				return nil
			},
			Description: "prefix of every key the engine writes (a collection's records are PREFIX + name + \":r:\" + key, its sorted set of keys PREFIX + name + \":keys\", its owner mark PREFIX + name + \":owner\"); keys under PREFIX + name + \":\" without that mark are a user's, and the run is refused"},
		{Key: KeyPasswordFile, Kind: setting.String, Default: "",
			Description: "file holding the password (mode 0600), when the target holds none; without it, the --cluster's secret file or REDISCLI_AUTH"},
		engine.ReplaceExistingSpec(Name),
	}
}

// Options are the resolved engine settings.
type Options struct {
	PoolSize       int
	Timeout        time.Duration
	ConnectTimeout time.Duration
	Prefix         string
	PasswordFile   string
	// ReplaceExisting (redis.replace_existing): Collection deletes the keys
	// under a collection's prefix that carry no owner mark instead of
	// refusing them.
	ReplaceExisting bool
	// Mark is the value of the owner key of the collections the
	// connection creates (engine.Mark of the run; "": naming no scenario).
	Mark string
}

// DefaultPoolSize is the pool size used when redis.pool_size is 0.
func DefaultPoolSize() int { return max(64, 10*runtime.GOMAXPROCS(0)) }

// OptionsFrom reads the engine settings from set (defaults for keys it
// lacks; nil gives every default).
func OptionsFrom(set *setting.Set) Options {
	get := setting.Getter(set, (&Engine{}).Settings())
	o := Options{
		PoolSize:       int(get(KeyPoolSize).Int()),
		Timeout:        get(KeyTimeout).Duration(),
		ConnectTimeout: get(KeyConnectTimeout).Duration(),
		Prefix:         get(KeyPrefix).String(),
		PasswordFile:   get(KeyPasswordFile).String(),

		ReplaceExisting: get(KeyReplaceExisting).Bool(),
	}
	if o.PoolSize <= 0 {
		o.PoolSize = DefaultPoolSize()
	}
	return o
}

// ErrConfig is wrapped by errors about a target or settings that cannot
// work.
var ErrConfig = fmt.Errorf("redis: %w", engine.ErrConfig)

// Target is a parsed --target.
type Target struct {
	Addr     string // host:port
	Username string // an ACL user; "" is the default user
	Password string // set by Open from a file or the environment; a target never holds one
	DB       int
}

// Redacted is the target without its password, for run.json.
func (t Target) Redacted() string {
	u := url.URL{Scheme: "redis", Host: t.Addr, Path: "/" + strconv.Itoa(t.DB)}
	if t.Username != "" {
		u.User = url.User(t.Username)
	}
	return u.String()
}

// ParseTarget parses redis://[user@]host[:port][/db] or host:port. A
// target holding a password is refused (the password comes from
// REDISCLI_AUTH or redis.password_file); its errors never quote the target.
func ParseTarget(target string) (Target, error) {
	if target == "" {
		return Target{}, fmt.Errorf("%w: no server given: use --target redis://host:port[/db] (password in REDISCLI_AUTH or redis.password_file) or --cluster NAME (see `scalelab cluster up redis`)", ErrConfig)
	}
	if !strings.Contains(target, "://") {
		if _, _, err := net.SplitHostPort(target); err != nil {
			return Target{}, fmt.Errorf("%w: target: not redis://host:port[/db] nor host:port", ErrConfig)
		}
		return Target{Addr: target}, nil
	}
	u, err := url.Parse(target)
	if err != nil {
		return Target{}, fmt.Errorf("%w: target: not a URL redis://host:port[/db]", ErrConfig)
	}
	switch {
	case u.Scheme == "rediss":
		return Target{}, fmt.Errorf("%w: target: rediss:// (TLS) is not supported; use redis://", ErrConfig)
	case u.Scheme != "redis":
		return Target{}, fmt.Errorf("%w: target: scheme %q; use redis://host:port[/db]", ErrConfig, u.Scheme)
	case u.Hostname() == "":
		return Target{}, fmt.Errorf("%w: target: no host; use redis://host:port[/db]", ErrConfig)
	case u.RawQuery != "" || u.Fragment != "":
		return Target{}, fmt.Errorf("%w: target: query parameters are not taken; use the %s.* settings", ErrConfig, Name)
	}
	t := Target{Addr: u.Host}
	if u.Port() == "" {
		t.Addr = net.JoinHostPort(u.Hostname(), DefaultPort)
	} else if p, err := strconv.ParseUint(u.Port(), 10, 16); err != nil || p == 0 {
		return Target{}, fmt.Errorf("%w: target: bad port", ErrConfig)
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			return Target{}, fmt.Errorf("%w: the target holds a password; give it in %s or a 0600 file named by %s instead, so that it never shows in the process list, shell history or results", ErrConfig, PasswordEnv, KeyPasswordFile)
		}
		t.Username = u.User.Username()
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		n, err := strconv.Atoi(db)
		if err != nil || n < 0 {
			return Target{}, fmt.Errorf("%w: target: the path is a database number (/0, /1, ...), not %q", ErrConfig, db)
		}
		t.DB = n
	}
	return t, nil
}

// CheckTarget checks the form of a target without connecting.
func (*Engine) CheckTarget(target string) error {
	_, err := ParseTarget(target)
	return err
}

// Open connects to cfg.Target or the --cluster's server. The password is
// the file redis.password_file names, else the cluster's secret file, else
// REDISCLI_AUTH; a target holding one is refused. Connection failures wrap
// engine.ErrUnreachable.
func (*Engine) Open(ctx context.Context, cfg engine.Config) (engine.Conn, error) {
	o := OptionsFrom(cfg.Settings)
	o.Mark = engine.Mark(cfg.Scenario, cfg.Run)
	target, password, err := engine.Credentials(cfg, KeyPasswordFile, o.PasswordFile, PasswordEnv)
	if err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	t, err := ParseTarget(target)
	if err != nil {
		return nil, err
	}
	t.Password = password
	return Connect(ctx, t, o)
}

// Connect opens a pool to t with the options and checks that the server
// answers.
func Connect(ctx context.Context, t Target, o Options) (*Conn, error) {
	ro := &goredis.Options{
		Addr: t.Addr, Username: t.Username, Password: t.Password, DB: t.DB,
		// RESP2, no client identity and no maintenance notifications: one
		// AUTH (and SELECT) per new connection, nothing else.
		Protocol: 2, DisableIdentity: true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		PoolSize:                 o.PoolSize,
		PoolTimeout:              o.Timeout,
		DialTimeout:              o.ConnectTimeout,
		Dialer:                   netdial.Dialer{Timeout: o.ConnectTimeout, KeepAlive: 5 * time.Minute}.DialContext,
		DialerRetries:            1,
		ReadTimeout:              o.Timeout,
		WriteTimeout:             o.Timeout,
		ContextTimeoutEnabled:    true,
		// A load generator counts failures: no retries behind its back.
		MaxRetries:      -1,
		ConnMaxIdleTime: time.Hour,
	}
	c := &Conn{client: goredis.NewClient(ro), opts: o, target: t.Redacted()}
	if err := c.client.Ping(ctx).Err(); err != nil {
		c.client.Close()
		if isAuthFailure(err) {
			return nil, engine.AuthError("redis "+t.Addr, ro.Username, engine.PasswordSources{Env: PasswordEnv, File: KeyPasswordFile}, Classify(ctx, wrap(err)))
		}
		return nil, fmt.Errorf("redis %s: %w: %w", t.Addr, engine.ErrUnreachable, Classify(ctx, wrap(err)))
	}
	return c, nil
}

// Conn is an open redis engine: a pool of connections to one server.
type Conn struct {
	client *goredis.Client
	opts   Options
	target string // redacted
}

// Client returns the go-redis client.
func (c *Conn) Client() *goredis.Client { return c.client }

// Options returns the settings in effect.
func (c *Conn) Options() Options { return c.opts }

// Close closes the pool.
func (c *Conn) Close() error { return c.client.Close() }

// Info reports the server version and the server settings that shape
// results (INFO: memory limit and policy, persistence), beside the
// client's.
func (c *Conn) Info(ctx context.Context) (engine.Info, error) {
	info := engine.Info{Engine: Name, Target: c.target, Extra: map[string]string{
		"pool_size": strconv.Itoa(c.opts.PoolSize),
		"timeout":   c.opts.Timeout.String(),
		"prefix":    c.opts.Prefix,
	}}
	fields, err := c.serverInfo(ctx, "server", "memory", "persistence")
	if err != nil {
		return info, fmt.Errorf("redis info: %w", err)
	}
	info.Version = "Redis " + fields["redis_version"]
	for _, k := range []string{"redis_mode", "maxmemory", "maxmemory_policy", "aof_enabled", "io_threads_active", "mem_allocator"} {
		if v, ok := fields[k]; ok {
			info.Extra[k] = v
		}
	}
	return info, nil
}

// serverInfo returns the fields of INFO's sections.
func (c *Conn) serverInfo(ctx context.Context, sections ...string) (map[string]string, error) {
	s, err := c.client.Info(ctx, sections...).Result()
	if err != nil {
		return nil, err
	}
	return ParseInfo(s), nil
}

// ParseInfo parses INFO's reply into its name:value fields.
func ParseInfo(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = v
		}
	}
	return out
}

// isAuthFailure reports whether err is the server refusing the client:
// a wrong password (WRONGPASS) or none given to a server that wants one
// (NOAUTH).
func isAuthFailure(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "WRONGPASS") || strings.HasPrefix(msg, "NOAUTH") || strings.Contains(msg, "ERR AUTH")
}
