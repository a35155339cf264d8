// Package mongodb is the MongoDB engine: the official Go driver against a
// mongod, a replica set, or the routers (mongos) of a sharded cluster,
// which it spreads requests over at random per operation. It also speaks to
// any server of the MongoDB wire protocol, FerretDB among them, and tells
// which server it measured.
package mongodb

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/netdial"
	"github.com/scalelab/scalelab/setting"
)

// Name is the engine's registry name.
const Name = "mongodb"

// Setting keys.
const (
	KeyW            = "mongodb.w"
	KeyJournal      = "mongodb.journal"
	KeyReadPref     = "mongodb.read_preference"
	KeyReadConcern  = "mongodb.read_concern"
	KeyPoolSize     = "mongodb.pool_size"
	KeyTimeout      = "mongodb.timeout"
	KeyLayout       = "mongodb.layout"
	KeyNaturalIDs   = "mongodb.natural_ids"
	KeyRouters      = "mongodb.routers"
	KeyShardKey     = "mongodb.shard_key"
	KeyChunkSize    = "mongodb.chunk_size_mb"
	KeyPasswordFile = "mongodb.password_file"
	KeyDatabase     = "mongodb.database"
	// KeyReplaceExisting lets a run drop a collection scalelab did not
	// create (Claim).
	KeyReplaceExisting = "mongodb." + engine.ReplaceExistingKey
)

// PasswordEnv is the environment variable holding the password.
const PasswordEnv = "MONGODB_PASSWORD"

// Layouts of the scenarios with users (mongodb.layout).
const (
	LayoutShared  = "shared"   // one collection for every user
	LayoutPerUser = "per_user" // a collection per user (the mHealth study's)
)

func init() { engine.Register(&Engine{}) }

// Engine is the mongodb engine.
type Engine struct{}

var _ engine.TargetChecker = (*Engine)(nil)

// Name returns "mongodb".
func (*Engine) Name() string { return Name }

// TargetForm is how a target names the server.
func (*Engine) TargetForm() (form, env string) { return "mongodb://host:port/db", "" }

// Description is one line for `scalelab list`.
func (*Engine) Description() string {
	return "MongoDB (or a MongoDB-wire server such as FerretDB) through the official driver; target: mongodb://[user@]host:port[,host:port...]/db (several hosts: a sharded cluster's routers; password from MONGODB_PASSWORD or mongodb.password_file), or --cluster NAME"
}

// HasRecords reports that connections implement engine.Records.
func (*Engine) HasRecords() bool { return true }

// Settings declares the driver, layout and sharding settings.
func (*Engine) Settings() []setting.Spec {
	return []setting.Spec{
		{Key: KeyW, Kind: setting.Enum, Default: "server", Allowed: []string{"server", "majority", "0", "1", "2", "3"},
			Description: "write concern w: how many members acknowledge a write (server keeps the server's default)"},
		{Key: KeyJournal, Kind: setting.Enum, Default: "server", Allowed: []string{"server", "true", "false"},
			Description: "write concern j: acknowledge a write once it is in the journal"},
		{Key: KeyReadPref, Kind: setting.Enum, Default: "primary", Allowed: []string{"primary", "primaryPreferred", "secondary", "secondaryPreferred", "nearest"},
			Description: "read preference: which replica set members serve reads (the read-back always reads the primary)"},
		{Key: KeyReadConcern, Kind: setting.Enum, Default: "server", Allowed: []string{"server", "local", "available", "majority", "linearizable"},
			Description: "read concern of reads (server keeps the server's default)"},
		{Key: KeyPoolSize, Kind: setting.Int, Default: "0", Min: 0, Max: 10000,
			Description: "connections per server; 0 keeps the driver's default (100)"},
		{Key: KeyTimeout, Kind: setting.Duration, Default: "10s", Min: 0.001, Max: 3600,
			Description: "how long one operation may take, connecting included"},
		{Key: KeyLayout, Kind: setting.Enum, Default: LayoutShared, Allowed: []string{LayoutShared, LayoutPerUser},
			Description: "collections of scenarios with users (mhealth): one shared collection, or one per user as the mHealth study had"},
		{Key: KeyNaturalIDs, Kind: setting.Bool, Default: "true",
			Description: "upserts keyed on a natural id (an activity's start + \"-\" + user id, as the mHealth study did); false inserts documents with generated ids"},
		{Key: KeyRouters, Kind: setting.Enum, Default: "random", Allowed: []string{"random", "driver"},
			Description: "with several hosts in the target (a sharded cluster's routers): random picks one at random per operation, as the study's client did; driver lets the driver choose (of two random routers within 15 ms of the fastest, the less busy)"},
		{Key: KeyShardKey, Kind: setting.Enum, Default: "", Allowed: []string{"", "hashed:_id", "range:_id", "range:name"},
			Description: "shard key of the collections a scenario creates; only against a sharded cluster (a mongos)"},
		{Key: KeyChunkSize, Kind: setting.Int, Default: "0", Min: 0, Max: 1024,
			Description: "chunk size in MB of a sharded cluster (0 keeps the cluster's); only against a sharded cluster"},
		{Key: KeyPasswordFile, Kind: setting.String, Default: "",
			Description: "file holding the password (mode 0600); without it, MONGODB_PASSWORD or the --cluster's secret file"},
		{Key: KeyDatabase, Kind: setting.String, Default: "", Check: checkDatabase,
			Description: "database of the scenario's collections; empty: the target's (its path), else scalelab. A collection of the scenario's name there that scalelab did not create is refused"},
		engine.ReplaceExistingSpec(Name),
	}
}

// Options are the resolved engine settings.
type Options struct {
	W            string
	Journal      string
	ReadPref     string
	ReadConcern  string
	PoolSize     int
	Timeout      time.Duration
	Layout       string
	NaturalIDs   bool
	Routers      string
	ShardKey     string
	ChunkSizeMB  int
	PasswordFile string
	Database     string // mongodb.database; "": the target's
	// ReplaceExisting (mongodb.replace_existing): Claim drops a collection
	// scalelab did not create instead of refusing it.
	ReplaceExisting bool
	// Mark is what the registry records for the collections the
	// connection creates (engine.Mark of the run; "": naming no scenario).
	Mark string
}

// OptionsFrom reads the engine settings from set (defaults for keys it
// lacks; nil gives every default).
func OptionsFrom(set *setting.Set) Options {
	get := setting.Getter(set, (&Engine{}).Settings())
	return Options{
		W: get(KeyW).String(), Journal: get(KeyJournal).String(),
		ReadPref: get(KeyReadPref).String(), ReadConcern: get(KeyReadConcern).String(),
		PoolSize: int(get(KeyPoolSize).Int()), Timeout: get(KeyTimeout).Duration(),
		Layout: get(KeyLayout).String(), NaturalIDs: get(KeyNaturalIDs).Bool(),
		Routers: get(KeyRouters).String(), ShardKey: get(KeyShardKey).String(),
		ChunkSizeMB: int(get(KeyChunkSize).Int()), PasswordFile: get(KeyPasswordFile).String(),
		Database: get(KeyDatabase).String(), ReplaceExisting: get(KeyReplaceExisting).Bool(),
	}
}

// ErrConfig is wrapped by errors about a target or settings that cannot
// work.
var ErrConfig = fmt.Errorf("mongodb: %w", engine.ErrConfig)

// Target is a parsed mongodb:// target.
type Target struct {
	User     string
	Hosts    []string // host:port
	Database string
	Query    url.Values
}

// ParseTarget parses mongodb://[user@]host:port[,host:port...]/db[?options];
// a password in it is refused without being echoed.
func ParseTarget(target string) (Target, error) {
	rest, ok := strings.CutPrefix(target, "mongodb://")
	if !ok {
		return Target{}, fmt.Errorf("%w: target %q: want mongodb://[user@]host:port[,host:port...]/db", ErrConfig, redact(target))
	}
	var t Target
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		user := rest[:at]
		if strings.Contains(user, ":") {
			return Target{}, fmt.Errorf("%w: the target holds a password; give it in %s or a 0600 file named by %s instead, so that it never shows in the process list, shell history or results", ErrConfig, PasswordEnv, KeyPasswordFile)
		}
		u, err := url.PathUnescape(user)
		if err != nil {
			return Target{}, fmt.Errorf("%w: target user: %w", ErrConfig, err)
		}
		t.User, rest = u, rest[at+1:]
	}
	hosts, path, _ := strings.Cut(rest, "/")
	path, query, _ := strings.Cut(path, "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return Target{}, fmt.Errorf("%w: target options: %w", ErrConfig, err)
	}
	if q.Has("password") {
		return Target{}, fmt.Errorf("%w: the target holds a password; give it in %s or a 0600 file named by %s instead", ErrConfig, PasswordEnv, KeyPasswordFile)
	}
	t.Query = q
	for _, h := range strings.Split(hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			if !strings.Contains(h, ":") {
				h += ":27017"
			}
			t.Hosts = append(t.Hosts, h)
		}
	}
	if len(t.Hosts) == 0 {
		return Target{}, fmt.Errorf("%w: target %q names no host", ErrConfig, redact(target))
	}
	t.Database = path
	if t.Database == "" {
		t.Database = "scalelab"
	}
	if err := validDatabase(t.Database); err != nil {
		return Target{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return t, nil
}

// validDatabase refuses a database name MongoDB cannot hold.
func validDatabase(name string) error {
	if strings.ContainsAny(name, `/\. "$`) || len(name) > 63 {
		return fmt.Errorf("database name %q: at most 63 characters, no '/', '\\', '.', ' ', '\"' or '$'", name)
	}
	return nil
}

func checkDatabase(v setting.Value) error { return validDatabase(v.String()) }

// URI returns the target with the given hosts and no password, for the
// driver.
func (t Target) URI(hosts []string) string {
	u := "mongodb://"
	if t.User != "" {
		u += url.PathEscape(t.User) + "@"
	}
	u += strings.Join(hosts, ",") + "/" + t.Database
	if len(t.Query) > 0 {
		u += "?" + t.Query.Encode()
	}
	return u
}

// redact cuts what stands between "://" and "@" (a user and password).
func redact(target string) string {
	scheme, rest, ok := strings.Cut(target, "://")
	if !ok {
		return target
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		return scheme + "://REDACTED@" + rest[at+1:]
	}
	return target
}

// errNoServer is the error for a run given neither a target nor a cluster.
func errNoServer() error {
	return fmt.Errorf("%w: no server given: use --target mongodb://host:port/db or --cluster NAME (see `scalelab cluster up ferretdb`)", ErrConfig)
}

// CheckTarget refuses a malformed target or one that holds a password,
// and no target at all.
func (e *Engine) CheckTarget(target string) error {
	if target == "" {
		return errNoServer()
	}
	_, err := ParseTarget(target)
	return err
}

// Open connects to cfg.Target (or the --cluster's): one client per router
// with several hosts and mongodb.routers=random, one client otherwise. It
// checks what the server is and refuses sharding settings against a
// server that is not a sharded cluster.
func (e *Engine) Open(ctx context.Context, cfg engine.Config) (engine.Conn, error) {
	o := OptionsFrom(cfg.Settings)
	target, password, err := engine.Credentials(cfg, KeyPasswordFile, o.PasswordFile, PasswordEnv)
	if err != nil {
		return nil, fmt.Errorf("mongodb: %w", err)
	}
	if target == "" {
		return nil, errNoServer()
	}
	t, err := ParseTarget(target)
	if err != nil {
		return nil, err
	}
	if o.Database != "" {
		t.Database = o.Database
	}
	o.Mark = engine.Mark(cfg.Scenario, cfg.Run)
	return Connect(ctx, t, password, o)
}

// assumeRouters makes Connect take every server for a mongos (tests of
// the router spread against servers without sharding).
var assumeRouters bool

// Conn is a connection to a MongoDB deployment: one client per router, or
// one client for every host.
type Conn struct {
	t       Target
	opts    Options
	clients []*mongo.Client   // one per router, or one
	dbs     []*mongo.Database // the target's database on each client
	primary *mongo.Database   // on the first client, read from the primary
	spread  *spread
	server  Server
}

// Connect opens the clients of t with password and o, and learns what the
// server is.
func Connect(ctx context.Context, t Target, password string, o Options) (*Conn, error) {
	c := &Conn{t: t, opts: o, spread: newSpread()}
	groups := [][]string{t.Hosts}
	if len(t.Hosts) > 1 && o.Routers == "random" {
		groups = groups[:0]
		for _, h := range t.Hosts {
			groups = append(groups, []string{h})
		}
	}
	for _, hosts := range groups {
		cl, err := c.newClient(hosts, password)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.clients = append(c.clients, cl)
		c.dbs = append(c.dbs, cl.Database(t.Database))
	}
	c.primary = c.clients[0].Database(t.Database, options.Database().SetReadPreference(readpref.Primary()))
	pctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	srv, err := describe(pctx, c.clients[0])
	if err == nil {
		// FerretDB checks a login only when it first reaches its
		// backend: a listing of the database does, and fails then
		_, lerr := c.primary.ListCollectionNames(pctx, bson.D{})
		if lerr != nil && isAuthFailure(lerr) {
			err = lerr
		}
	}
	if err != nil {
		c.Close()
		if isAuthFailure(err) {
			return nil, engine.AuthError("mongodb at "+strings.Join(t.Hosts, ","), t.User, engine.PasswordSources{Env: PasswordEnv, File: KeyPasswordFile}, err)
		}
		return nil, fmt.Errorf("%w: mongodb at %s: %w", engine.ErrUnreachable, strings.Join(t.Hosts, ","), err)
	}
	if assumeRouters {
		srv.Sharded = true
	}
	c.server = srv
	if len(t.Hosts) > 1 && o.Routers == "random" && !srv.Sharded {
		c.Close()
		return nil, fmt.Errorf("%w: several hosts with %s=random are taken as a sharded cluster's routers, but %s is %s, not a mongos; use %s=driver for a replica set's members",
			ErrConfig, KeyRouters, t.Hosts[0], srv.Product(), KeyRouters)
	}
	if err := c.checkSharding(); err != nil {
		c.Close()
		return nil, err
	}
	if srv.Sharded && o.ChunkSizeMB > 0 {
		if err := c.setChunkSize(pctx); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

func (c *Conn) newClient(hosts []string, password string) (*mongo.Client, error) {
	// The credential goes in through SetAuth, with the password: the
	// driver refuses a URI that names PLAIN without one.
	dt := c.t
	dt.User, dt.Query = "", url.Values{}
	for k, v := range c.t.Query {
		if k != "authMechanism" && k != "authSource" {
			dt.Query[k] = v
		}
	}
	co := options.Client().ApplyURI(dt.URI(hosts)).SetTimeout(c.opts.Timeout).
		SetMonitor(c.spread.monitor()).SetAppName("scalelab").
		SetDialer(netdial.Dialer{KeepAlive: 2 * time.Minute})
	if c.t.User != "" {
		cred := options.Credential{Username: c.t.User, Password: password, PasswordSet: password != ""}
		if m := c.t.Query.Get("authMechanism"); m != "" {
			cred.AuthMechanism = m
		}
		if s := c.t.Query.Get("authSource"); s != "" {
			cred.AuthSource = s
		}
		co.SetAuth(cred)
	}
	if c.opts.PoolSize > 0 {
		co.SetMaxPoolSize(uint64(c.opts.PoolSize))
	}
	if wc := c.writeConcern(); wc != nil {
		co.SetWriteConcern(wc)
	}
	rp, err := readpref.ModeFromString(c.opts.ReadPref)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, KeyReadPref, err)
	}
	pref, err := readpref.New(rp)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, KeyReadPref, err)
	}
	co.SetReadPreference(pref)
	if c.opts.ReadConcern != "server" {
		co.SetReadConcern(&readconcern.ReadConcern{Level: c.opts.ReadConcern})
	}
	cl, err := mongo.Connect(co)
	if err != nil {
		return nil, fmt.Errorf("%w: mongodb client for %s: %w", ErrConfig, strings.Join(hosts, ","), err)
	}
	return cl, nil
}

func (c *Conn) writeConcern() *writeconcern.WriteConcern {
	if c.opts.W == "server" && c.opts.Journal == "server" {
		return nil
	}
	wc := &writeconcern.WriteConcern{}
	switch c.opts.W {
	case "server":
	case "majority":
		wc.W = "majority"
	default:
		n := int(c.opts.W[0] - '0')
		wc.W = n
	}
	if c.opts.Journal != "server" {
		j := c.opts.Journal == "true"
		wc.Journal = &j
	}
	return wc
}

// UnmeasuredTimeout bounds operations that are not measured (loads, the
// checks after a run, the audit's read-back), which mongodb.timeout does
// not: on a big collection a count can take longer than an operation may.
const UnmeasuredTimeout = 30 * time.Minute

// Unmeasured returns ctx with a deadline of UnmeasuredTimeout, which the
// driver then uses instead of mongodb.timeout.
func Unmeasured(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, UnmeasuredTimeout)
}

// Options returns the resolved settings.
func (c *Conn) Options() Options { return c.opts }

// Server returns what the server is.
func (c *Conn) Server() Server { return c.server }

// Database returns the target's database on a client chosen as the
// operations' are (at random among the routers).
func (c *Conn) Database() *mongo.Database { return c.dbs[c.pick()] }

// Primary returns the target's database read from the primary, for checks
// and the acknowledged-write audit's read-back.
func (c *Conn) Primary() *mongo.Database { return c.primary }

// pick chooses the client of an operation: at random among the routers.
func (c *Conn) pick() int {
	if len(c.clients) == 1 {
		return 0
	}
	return rand.IntN(len(c.clients))
}

// Close disconnects every client.
func (c *Conn) Close() error {
	var errs []error
	for _, cl := range c.clients {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		errs = append(errs, cl.Disconnect(ctx))
		cancel()
	}
	return errors.Join(errs...)
}

// Info describes the server: what it really is (MongoDB, or FerretDB and
// its backend), its topology, and the sharding of a sharded cluster.
func (c *Conn) Info(ctx context.Context) (engine.Info, error) {
	extra := map[string]string{
		"product":     c.server.Product(),
		"api_version": c.server.Version, // the MongoDB version whose API it speaks
		"topology":    c.server.Topology(),
		"database":    c.t.Database,
		"routers":     c.opts.Routers,
		"write_w":     c.opts.W,
		"read_pref":   c.opts.ReadPref,
		"layout":      c.opts.Layout,
		"natural_id":  fmt.Sprint(c.opts.NaturalIDs),
	}
	if c.server.Backend != "" {
		extra["backend"] = c.server.Backend
	}
	if c.server.Sharded {
		if d, err := c.shardDistribution(ctx); err == nil {
			extra["shards_before"] = d
		} else {
			extra["shards_before"] = "unavailable: " + err.Error()
		}
	}
	return engine.Info{Engine: Name, Version: c.server.Product(), Product: c.server.Product(), Target: redact(c.t.URI(c.t.Hosts)), Extra: extra}, nil
}

// AfterRun reports the requests each router (or server) received and, on
// a sharded cluster, the chunk distribution after the run.
func (c *Conn) AfterRun(ctx context.Context) map[string]string {
	out := map[string]string{"requests_per_server": c.spread.String()}
	if c.server.Sharded {
		if d, err := c.shardDistribution(ctx); err == nil {
			out["shards_after"] = d
		} else {
			out["shards_after"] = "unavailable: " + err.Error()
		}
	}
	return out
}

// isAuthFailure reports whether err is the server refusing the login (a
// wrong or missing password: AuthenticationFailed, code 18) or the
// driver's authentication handshake failing.
func isAuthFailure(err error) bool {
	var se mongo.ServerError
	if errors.As(err, &se) && se.HasErrorCode(codeAuthenticationFailed) {
		return true
	}
	msg := err.Error()
	for _, m := range []string{"AuthenticationFailed", "auth error", "unable to authenticate",
		"password authentication failed", "failed SASL auth"} { // the last two: FerretDB's PostgreSQL backend
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// codeAuthenticationFailed is the server's error code of a refused login.
const codeAuthenticationFailed = 18
