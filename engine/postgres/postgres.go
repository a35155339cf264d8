// Package postgres is the "postgres" engine: a PostgreSQL server reached
// through a pgx (v5) connection pool, optionally with read replicas that a
// Router sends reads to (with a read-your-writes window, as Rails does).
// cluster.go provisions local primaries and streaming replicas.
package postgres

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/netdial"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/setting"
	"github.com/scalelab/scalelab/wait"
)

// Name is the engine's registry name.
const Name = "postgres"

// Setting keys of the postgres engine.
const (
	KeyPoolSize          = "postgres.pool_size"
	KeySynchronousCommit = "postgres.synchronous_commit"
	KeyPrepared          = "postgres.prepared"
	KeyCopy              = "postgres.copy"
	KeyReadFrom          = "postgres.read_from"
	KeyRYWWindow         = "postgres.ryw_window"
	KeyReplicas          = "postgres.replicas"
	KeyTLS               = "postgres.tls"
	KeyTLSCAFile         = "postgres.tls_ca_file"
	KeyPasswordFile      = "postgres.password_file"
	KeyConnectTimeout    = "postgres.connect_timeout"
	KeyReplicaWait       = "postgres.replica_wait"
	KeySchema            = "postgres.schema"
	KeyReplaceExisting   = "postgres." + engine.ReplaceExistingKey
)

// PasswordEnv is the environment variable holding the password, as libpq
// reads it.
const PasswordEnv = "PGPASSWORD"

func init() { engine.Register(&Engine{}) }

// Engine is the postgres engine. Its zero value is ready to use.
type Engine struct{}

// Name returns "postgres".
func (*Engine) Name() string { return Name }

// TargetForm is how a target names the server; PGHOST may name it instead.
func (*Engine) TargetForm() (form, env string) { return "postgres://user@host:port/db", "PGHOST" }

// Description is one line for `scalelab list`.
func (*Engine) Description() string {
	return "PostgreSQL server through a pgx pool, with optional read replicas; target: postgres://user@host:port/db (password from PGPASSWORD or postgres.password_file), or --cluster NAME"
}

// Settings declares the pool, session and routing settings.
func (*Engine) Settings() []setting.Spec {
	return []setting.Spec{
		{Key: KeyPoolSize, Kind: setting.Int, Default: "0", Min: 0, Max: 10000,
			Description: "connections per server (primary and each replica); 0 means max(32, 4 x GOMAXPROCS); the pool opens them as users need them"},
		{Key: KeySynchronousCommit, Kind: setting.Enum, Default: "server", Allowed: []string{"server", "on", "off", "local", "remote_write", "remote_apply"},
			Description: "synchronous_commit of every session; server keeps the server's setting"},
		{Key: KeyPrepared, Kind: setting.Bool, Default: "true",
			Description: "prepared statements (cached per connection); false sends every query unprepared (parsed and planned on each execution)"},
		{Key: KeyCopy, Kind: setting.Bool, Default: "true",
			Description: "bulk writes through COPY; false uses one multi-row INSERT per batch"},
		{Key: KeyReadFrom, Kind: setting.Enum, Default: "primary", Allowed: []string{"primary", "replicas"},
			Description: "where reads go: the primary, or the replicas (a user's reads within postgres.ryw_window of that user's write go to the primary)"},
		{Key: KeyRYWWindow, Kind: setting.Duration, Default: "2s", Min: 0, Max: 3600,
			Description: "read-your-writes window with read_from=replicas: reads by a user this soon after the user's write go to the primary (Rails uses 2s); 0 turns it off"},
		{Key: KeyReplicas, Kind: setting.String, Default: "",
			Description: "read replicas as host:port,host:port (same user, password and database as the target); with --cluster, the cluster's replicas"},
		{Key: KeyTLS, Kind: setting.Enum, Default: "off", Allowed: []string{"off", "on", "verify-ca", "insecure"},
			Description: "TLS: on verifies the server's certificate chain and host name, verify-ca only the chain, insecure encrypts without verifying"},
		{Key: KeyTLSCAFile, Kind: setting.String, Default: "",
			Description: "PEM file of the CA that signed the server's certificate (default: the system's roots, or the CA of a --cluster started with --opt tls=on)"},
		{Key: KeyPasswordFile, Kind: setting.String, Default: "",
			Description: "file holding the password (mode 0600); without it, PGPASSWORD or the --cluster's secret file"},
		{Key: KeyConnectTimeout, Kind: setting.Duration, Default: "10s", Min: 0.001, Max: 3600,
			Description: "how long to wait for a new connection"},
		{Key: KeyReplicaWait, Kind: setting.Duration, Default: "2m", Min: 0.001, Max: 86400,
			Description: "how long to wait for a replica to replay the primary's writes (before checks that read replicas) before failing, naming the replica"},
		{Key: KeySchema, Kind: setting.String, Default: DefaultSchema, Check: checkSchema,
			Description: "the schema every table of a run lives in (created when missing; every connection's search_path is that schema alone, so tables in other schemas, public among them, are never touched)"},
		engine.ReplaceExistingSpec(Name),
	}
}

// Options are the resolved engine settings.
type Options struct {
	PoolSize          int
	SynchronousCommit string // "server" keeps the server's
	Prepared          bool
	Copy              bool
	ReadFrom          string // primary|replicas
	RYWWindow         time.Duration
	Replicas          []string // host:port
	TLS               string   // off|on|verify-ca|insecure
	TLSCAFile         string
	PasswordFile      string
	ConnectTimeout    time.Duration
	ReplicaWait       time.Duration // bound of WaitReplicas per replica
	Schema            string        // the schema of the run's tables, every connection's search_path
	ReplaceExisting   bool          // Claim drops a table of a scenario's name scalelab did not create
}

// DefaultPoolSize is the pool size used when postgres.pool_size is 0.
func DefaultPoolSize() int { return max(32, 4*runtime.GOMAXPROCS(0)) }

// OptionsFrom reads the engine settings from set (defaults for keys it
// lacks; nil gives every default).
func OptionsFrom(set *setting.Set) Options {
	get := setting.Getter(set, (&Engine{}).Settings())
	o := Options{
		PoolSize:          int(get(KeyPoolSize).Int()),
		SynchronousCommit: get(KeySynchronousCommit).String(),
		Prepared:          get(KeyPrepared).Bool(),
		Copy:              get(KeyCopy).Bool(),
		ReadFrom:          get(KeyReadFrom).String(),
		RYWWindow:         get(KeyRYWWindow).Duration(),
		TLS:               get(KeyTLS).String(),
		TLSCAFile:         get(KeyTLSCAFile).String(),
		PasswordFile:      get(KeyPasswordFile).String(),
		ConnectTimeout:    get(KeyConnectTimeout).Duration(),
		ReplicaWait:       get(KeyReplicaWait).Duration(),
		Schema:            get(KeySchema).String(),
		ReplaceExisting:   get(KeyReplaceExisting).Bool(),
	}
	if o.PoolSize <= 0 {
		o.PoolSize = DefaultPoolSize()
	}
	for _, r := range strings.Split(get(KeyReplicas).String(), ",") {
		if r = strings.TrimSpace(r); r != "" {
			o.Replicas = append(o.Replicas, r)
		}
	}
	return o
}

// ErrConfig is wrapped by errors about a target or settings that cannot
// work (no target, a password on the command line, a bad replica address).
var ErrConfig = fmt.Errorf("postgres: %w", engine.ErrConfig)

// Open connects a pool to the primary (cfg.Target, the --cluster's primary,
// or the libpq environment PGHOST... when neither is given) and one to each
// replica. Connection failures wrap engine.ErrUnreachable.
func (e *Engine) Open(ctx context.Context, cfg engine.Config) (engine.Conn, error) {
	o := OptionsFrom(cfg.Settings)
	target, password, err := engine.Credentials(cfg, KeyPasswordFile, o.PasswordFile, PasswordEnv)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if cfg.Cluster != nil {
		if len(o.Replicas) == 0 {
			for _, n := range cfg.Cluster.Nodes {
				if n.Role == RoleReplica {
					o.Replicas = append(o.Replicas, n.ClientAddress())
				}
			}
		}
		if o.TLSCAFile == "" && o.TLS != "off" {
			o.TLSCAFile = cfg.Cluster.Params[ParamCAFile]
		}
	}
	c, err := Connect(ctx, target, password, o)
	if err != nil {
		return nil, err
	}
	c.scenario, c.run = cfg.Scenario, cfg.Run
	return c, nil
}

var _ engine.TargetChecker = (*Engine)(nil)

// CheckTarget refuses a target that holds a password or that is not a
// PostgreSQL URL or keyword/value string, without connecting.
func (e *Engine) CheckTarget(target string) error {
	if target == "" && os.Getenv("PGHOST") == "" {
		return errNoServer()
	}
	if hasPassword(target) {
		return fmt.Errorf("%w: the target holds a password; give it in PGPASSWORD or a 0600 file named by %s instead, so that it never shows in the process list, shell history or results", ErrConfig, KeyPasswordFile)
	}
	if _, err := pgxpool.ParseConfig(target); err != nil {
		return fmt.Errorf("%w: target: %w", ErrConfig, err)
	}
	return nil
}

// errNoServer is the error for a run given no server (no target, no
// cluster, no PGHOST).
func errNoServer() error {
	return fmt.Errorf("%w: no server given: use --target postgres://user@host:port/db (password in PGPASSWORD or postgres.password_file) or --cluster NAME (see `scalelab cluster up postgres`)", ErrConfig)
}

// Connect opens the pools for target with the given password and options.
func Connect(ctx context.Context, target, password string, o Options) (*Conn, error) {
	if target == "" && os.Getenv("PGHOST") == "" {
		return nil, errNoServer()
	}
	if hasPassword(target) {
		return nil, fmt.Errorf("%w: the target holds a password; give it in PGPASSWORD or a 0600 file named by %s instead, so that it never shows in the process list, shell history or results", ErrConfig, KeyPasswordFile)
	}
	pc, err := pgxpool.ParseConfig(target)
	if err != nil {
		return nil, fmt.Errorf("%w: target: %w", ErrConfig, err)
	}
	cc := pc.ConnConfig
	cc.Password = password
	cc.ConnectTimeout = o.ConnectTimeout
	cc.DialFunc = netdial.Dialer{KeepAlive: 5 * time.Minute}.DialContext
	if cc.RuntimeParams == nil {
		cc.RuntimeParams = map[string]string{}
	}
	cc.RuntimeParams["application_name"] = "scalelab"
	if o.Schema == "" {
		o.Schema = DefaultSchema
	}
	// the schema alone (pg_catalog is always searched first): unqualified
	// names, COPY's and prepared statements' among them, resolve there
	cc.RuntimeParams["search_path"] = o.Schema
	if o.SynchronousCommit != "server" {
		cc.RuntimeParams["synchronous_commit"] = o.SynchronousCommit
	}
	cc.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
	if !o.Prepared {
		cc.DefaultQueryExecMode = pgx.QueryExecModeExec
	}
	if err := setTLS(cc, o); err != nil {
		return nil, err
	}
	pc.MaxConns = int32(o.PoolSize)
	pc.MinConns = 0
	pc.MaxConnIdleTime = time.Hour

	c := &Conn{opts: o, target: redact(cc.Config)}
	c.primary, err = openPool(ctx, pc)
	if err != nil {
		return nil, err
	}
	for _, addr := range o.Replicas {
		host, port, err := splitHostPort(addr)
		if err != nil {
			c.Close()
			return nil, err
		}
		rc := pc.Copy()
		rc.ConnConfig.Host, rc.ConnConfig.Port = host, port
		rc.ConnConfig.Fallbacks = nil
		if rc.ConnConfig.TLSConfig != nil {
			rc.ConnConfig.TLSConfig = rc.ConnConfig.TLSConfig.Clone()
			if o.TLS == "on" {
				rc.ConnConfig.TLSConfig.ServerName = host
			}
		}
		p, err := openPool(ctx, rc)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("replica %s: %w", addr, err)
		}
		c.replicas = append(c.replicas, p)
	}
	if o.ReadFrom == "replicas" && len(c.replicas) == 0 {
		c.Close()
		return nil, fmt.Errorf("%w: %s=replicas but there is no replica: set %s=host:port,... or use --cluster with a cluster started with --replicas N", ErrConfig, KeyReadFrom, KeyReplicas)
	}
	if err := c.primary.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&c.version); err != nil {
		c.Close()
		return nil, fmt.Errorf("postgres %s: %w: %w", c.target, engine.ErrUnreachable, err)
	}
	if err := c.ensureSchema(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// openPool creates a pool and checks that a connection works.
func openPool(ctx context.Context, pc *pgxpool.Config) (*pgxpool.Pool, error) {
	addr := net.JoinHostPort(pc.ConnConfig.Host, strconv.Itoa(int(pc.ConnConfig.Port)))
	p, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("postgres %s: %w: %w", addr, engine.ErrUnreachable, err)
	}
	if err := p.Ping(ctx); err != nil {
		p.Close()
		if isAuthFailure(err) {
			return nil, engine.AuthError("postgres "+addr, pc.ConnConfig.User, engine.PasswordSources{Env: PasswordEnv, File: KeyPasswordFile}, err)
		}
		return nil, fmt.Errorf("postgres %s: %w: %w", addr, engine.ErrUnreachable, Classify(ctx, err))
	}
	return p, nil
}

// SQLSTATE codes of a refused login: a wrong or missing password, or no
// pg_hba.conf entry for the user.
const (
	codeInvalidPassword      = "28P01"
	codeInvalidAuthorization = "28000"
)

// isAuthFailure reports whether err is the server refusing the login, or
// pgx's SCRAM exchange failing (no password to answer with).
func isAuthFailure(err error) bool {
	switch SQLState(err) {
	case codeInvalidPassword, codeInvalidAuthorization:
		return true
	}
	return strings.Contains(err.Error(), "failed SASL auth")
}

// hasPassword reports whether a URL or keyword/value target carries a
// password.
func hasPassword(target string) bool {
	if strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://") {
		if u, err := url.Parse(target); err == nil {
			if _, ok := u.User.Password(); ok {
				return true
			}
			return u.Query().Has("password")
		}
		return strings.Contains(target, "password")
	}
	for _, f := range strings.Fields(target) {
		if k, _, ok := strings.Cut(f, "="); ok && strings.TrimSpace(k) == "password" {
			return true
		}
	}
	return false
}

// redact describes a connection config without its password.
func redact(c pgconn.Config) string {
	u := url.URL{Scheme: "postgres", User: url.User(c.User), Host: net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port))), Path: "/" + c.Database}
	return u.String()
}

func splitHostPort(addr string) (string, uint16, error) {
	host, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("%w: %s: %q is not host:port", ErrConfig, KeyReplicas, addr)
	}
	port, err := strconv.ParseUint(ps, 10, 16)
	if err != nil || port == 0 {
		return "", 0, fmt.Errorf("%w: %s: bad port in %q", ErrConfig, KeyReplicas, addr)
	}
	return host, uint16(port), nil
}

// setTLS configures TLS from the options, replacing whatever sslmode the
// target asked for: off disables it; on verifies the chain and host name
// against the CA file (or the system roots); verify-ca verifies the chain
// only; insecure encrypts without verifying.
func setTLS(cc *pgx.ConnConfig, o Options) error {
	cc.Fallbacks = nil
	if o.TLS == "off" {
		if o.TLSCAFile != "" { // most likely a mistake: say so
			return fmt.Errorf("%w: %s is set but %s=off; set %s=on", ErrConfig, KeyTLSCAFile, KeyTLS, KeyTLS)
		}
		cc.TLSConfig = nil
		return nil
	}
	tc := &tls.Config{ServerName: cc.Host, MinVersion: tls.VersionTLS12}
	if o.TLSCAFile != "" {
		pem, err := os.ReadFile(o.TLSCAFile)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrConfig, KeyTLSCAFile, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("%w: %s: %s holds no PEM certificate", ErrConfig, KeyTLSCAFile, o.TLSCAFile)
		}
		tc.RootCAs = pool
	}
	switch o.TLS {
	case "insecure":
		tc.InsecureSkipVerify = true
	case "verify-ca":
		// Verify the chain but not the host name, as libpq's verify-ca.
		roots := tc.RootCAs
		tc.InsecureSkipVerify = true
		tc.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return errors.New("server sent no certificate")
			}
			certs := make([]*x509.Certificate, len(raw))
			for i, r := range raw {
				c, err := x509.ParseCertificate(r)
				if err != nil {
					return err
				}
				certs[i] = c
			}
			inter := x509.NewCertPool()
			for _, c := range certs[1:] {
				inter.AddCert(c)
			}
			_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
			return err
		}
	}
	cc.TLSConfig = tc
	return nil
}

// Conn is an open PostgreSQL engine: a pool on the primary and one on each
// replica.
type Conn struct {
	primary  *pgxpool.Pool
	replicas []*pgxpool.Pool
	opts     Options
	target   string
	version  int // server_version_num
	next     atomic.Uint64
	scenario string // the scenario and run named in the marks (MarkTables)
	run      string
}

// Primary returns the primary's pool: every write goes there.
func (c *Conn) Primary() *pgxpool.Pool { return c.primary }

// Replicas returns the replicas' pools (none without replicas).
func (c *Conn) Replicas() []*pgxpool.Pool { return c.replicas }

// Options returns the settings in effect.
func (c *Conn) Options() Options { return c.opts }

// VersionNum returns the server's server_version_num (150004 for 15.4).
func (c *Conn) VersionNum() int { return c.version }

// Close closes every pool.
func (c *Conn) Close() error {
	if c.primary != nil {
		c.primary.Close()
	}
	for _, r := range c.replicas {
		r.Close()
	}
	return nil
}

// Info reports the server version, the server settings that matter to
// results (shared_buffers, fsync, synchronous_commit as sessions see it...),
// and the client settings in effect.
func (c *Conn) Info(ctx context.Context) (engine.Info, error) {
	info := engine.Info{Engine: Name, Target: c.target, Extra: map[string]string{
		"pool_size":  strconv.Itoa(c.opts.PoolSize),
		"prepared":   strconv.FormatBool(c.opts.Prepared),
		"copy":       strconv.FormatBool(c.opts.Copy),
		"read_from":  c.opts.ReadFrom,
		"ryw_window": c.opts.RYWWindow.String(),
		"replicas":   strconv.Itoa(len(c.replicas)),
		"tls":        c.opts.TLS,
		"schema":     c.opts.Schema,
	}}
	if err := c.primary.QueryRow(ctx, "SELECT version()").Scan(&info.Version); err != nil {
		return info, fmt.Errorf("postgres info: %w", err)
	}
	for _, p := range []string{"server_version", "shared_buffers", "fsync", "synchronous_commit", "full_page_writes", "wal_level",
		"max_connections", "work_mem", "effective_cache_size", "checkpoint_timeout", "max_wal_size", "ssl"} {
		var v string
		if err := c.primary.QueryRow(ctx, "SELECT current_setting($1)", p).Scan(&v); err != nil {
			return info, fmt.Errorf("postgres info: %s: %w", p, err)
		}
		info.Extra[p] = v
	}
	return info, nil
}

// ReadPool returns the pool a read goes to when no user identity is known
// (no read-your-writes): with read_from=replicas the replicas in turn,
// else the primary.
func (c *Conn) ReadPool() *pgxpool.Pool {
	if c.opts.ReadFrom != "replicas" || len(c.replicas) == 0 {
		return c.primary
	}
	return c.replicas[(c.next.Add(1)-1)%uint64(len(c.replicas))]
}

// WaitReplicas returns once every replica has replayed the primary's WAL
// up to its position when called: every write acknowledged before the call
// is then visible on every replica.
func (c *Conn) WaitReplicas(ctx context.Context) error {
	if len(c.replicas) == 0 {
		return nil
	}
	var lsn string
	if err := c.primary.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsn); err != nil {
		return fmt.Errorf("primary WAL position: %w", Classify(ctx, err))
	}
	for i, r := range c.replicas {
		f := wait.For{What: fmt.Sprintf("replica %s to replay the primary's WAL up to %s", c.opts.Replicas[i], lsn),
			Bound: c.opts.ReplicaWait, Setting: KeyReplicaWait, Every: 20 * time.Millisecond,
			Hint: "the replica may have stopped streaming (scalelab cluster status, its log): restart it, or raise " + KeyReplicaWait}
		err := f.Poll(ctx, func(ctx context.Context) (bool, string, error) {
			var caught bool
			var at *string
			// NULL: not in recovery (not a replica at all), nothing to wait for.
			err := r.QueryRow(ctx, "SELECT COALESCE(pg_last_wal_replay_lsn() >= $1::pg_lsn, true), pg_last_wal_replay_lsn()::text", lsn).Scan(&caught, &at)
			if err != nil {
				return false, "", fmt.Errorf("WAL position: %w", Classify(ctx, err))
			}
			if at != nil {
				return caught, "replayed up to " + *at, nil
			}
			return caught, "", nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Router sends one user's queries: writes to the primary; reads to the
// primary, or with read_from=replicas to one replica (chosen round robin
// when the router is made) unless the user wrote within the read-your-
// writes window. Make one per user (scenario session): it is safe for
// concurrent use, but its window then covers the writes of every goroutine
// sharing it.
type Router struct {
	c         *Conn
	replica   *pgxpool.Pool // nil: reads go to the primary
	window    int64         // ns
	lastWrite atomic.Int64  // metrics.Now of the user's last write; 0 never
}

// NewRouter returns a router for one user.
func (c *Conn) NewRouter() *Router {
	r := &Router{c: c, window: int64(c.opts.RYWWindow)}
	if c.opts.ReadFrom == "replicas" && len(c.replicas) > 0 {
		r.replica = c.replicas[(c.next.Add(1)-1)%uint64(len(c.replicas))]
	}
	return r
}

// PrimaryRouter returns a router whose reads all go to the primary (what a
// read-back after a run needs: replicas may still be replaying).
func (c *Conn) PrimaryRouter() *Router { return &Router{c: c} }

// Writer returns the pool writes go to (the primary).
func (r *Router) Writer() *pgxpool.Pool { return r.c.primary }

// Wrote records that the user just wrote: for the window, the user's reads
// go to the primary.
func (r *Router) Wrote() {
	if r.replica != nil && r.window > 0 {
		r.lastWrite.Store(metrics.Now())
	}
}

// Reader returns the pool the user's next read goes to and whether it is
// the primary.
func (r *Router) Reader() (*pgxpool.Pool, bool) {
	if r.replica == nil {
		return r.c.primary, true
	}
	if last := r.lastWrite.Load(); last != 0 && metrics.Now()-last < r.window {
		return r.c.primary, true
	}
	return r.replica, false
}

// OthersReader is Reader for another user, who has written nothing: the
// view through which other users see this user's writes (what a freshness
// probe polls).
func (r *Router) OthersReader() (*pgxpool.Pool, bool) {
	if r.replica == nil {
		return r.c.primary, true
	}
	return r.replica, false
}

// SQLSTATE codes Classify treats specially.
const (
	codeSerialization      = "40001"
	codeDeadlock           = "40P01"
	codeTooManyConnections = "53300"
	codeCannotConnectNow   = "57P03"
	codeAdminShutdown      = "57P01"
	codeQueryCanceled      = "57014"
	codeLockNotAvailable   = "55P03"
)

// Classify gives err its outcome class: serialization failures, deadlocks,
// lock timeouts and "too many connections" are metrics.Rejected; a server
// that is starting or shutting down is metrics.Refused; an error after ctx
// ended is joined with ctx.Err() (a deadline is metrics.Timeout); other
// errors keep ClassOf's default (refused connections are refused). nil
// stays nil.
func Classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ended, e := engine.Ended(ctx, err); ended {
		return e
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case codeSerialization, codeDeadlock, codeTooManyConnections, codeLockNotAvailable:
			return metrics.WithClass(metrics.Rejected, err)
		case codeCannotConnectNow, codeAdminShutdown:
			return metrics.WithClass(metrics.Refused, err)
		case codeQueryCanceled:
			return metrics.WithClass(metrics.Timeout, err)
		}
	}
	return err
}

// SQLState returns the SQLSTATE of a server error in err's chain, or "".
func SQLState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}
