// Package cassandra is the "cassandra" engine: Apache Cassandra (5.0 for
// local rings) over CQL through the Apache Go driver
// (github.com/apache/cassandra-gocql-driver/v2), with token-aware routing,
// PasswordAuthenticator credentials, consistency levels for reads and writes,
// the replication factor and compaction strategy of the tables scenarios
// create, and batched bulk writes. cluster.go provisions local rings, one
// JVM per node, each node on its own loopback address; cassandratest starts
// real rings for tests.
//
// # How a scenario's storage file uses it
//
// A storage file (scenario/<name>/cassandra.go) type-asserts the engine
// connection to *Conn, then:
//
//   - creates its tables idempotently with CreateTable(ctx, "users",
//     "id bigint PRIMARY KEY, name text"), which adds the keyspace, the
//     compaction strategy (cassandra.compaction) and waits for schema
//     agreement and marks them as scalelab's (their comment); Claim(ctx,
//     "users", ...) checks them all first, refusing a table of the name
//     that scalelab did not create; DropTable and Truncate reset them; CreateIndex/DropIndex
//     manage storage-attached (SAI) secondary indexes and wait until they
//     are queryable on every node;
//   - names tables in statements through Table("users") (keyspace-qualified);
//   - reads with Read(stmt, args...) and writes with Write(stmt, args...):
//     gocql queries carrying the configured read or write consistency
//     (cassandra.read_consistency, cassandra.write_consistency); run them
//     with ExecContext/ScanContext/IterContext(ctx) and pass errors through
//     Classify(ctx, err) so they land in the right outcome class;
//   - bulk-writes with WriteBatch(ctx, stmt, rows): unlogged batches of
//     cassandra.batch_size rows, a few in flight at once;
//   - reaches the raw *gocql.Session with Session() for anything else.
//
// Errors: timeouts (client or coordinator read/write timeouts) are class
// timeout, unavailable replicas, overload and bootstrapping nodes are
// rejected, unreachable hosts refused; a missing row is the scenario's
// business (gocql.ErrNotFound from Scan).
package cassandra

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/netdial"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/setting"
	"github.com/scalelab/scalelab/wait"
)

// Name is the engine's registry name.
const Name = "cassandra"

// Setting keys.
const (
	KeyReplication      = "cassandra.replication"
	KeyReadConsistency  = "cassandra.read_consistency"
	KeyWriteConsistency = "cassandra.write_consistency"
	KeyBatchSize        = "cassandra.batch_size"
	KeyCompaction       = "cassandra.compaction"
	KeyTimeout          = "cassandra.timeout"
	KeyKeyspace         = "cassandra.keyspace"
	KeyUser             = "cassandra.user"
	KeyConns            = "cassandra.conns"
	KeyIndexWait        = "cassandra.index_wait"
	KeySchemaWait       = "cassandra.schema_wait"
	KeyReplaceExisting  = "cassandra." + engine.ReplaceExistingKey
)

// PasswordEnv is the environment variable holding the password for
// --target (a --cluster's password comes from its 0600 secret file).
const PasswordEnv = "SCALELAB_CASSANDRA_PASSWORD"

// DefaultPort is the CQL native port when a target names none.
const DefaultPort = 9042

// Compaction strategies (cassandra.compaction) and their CQL class names.
var compactions = map[string]string{
	"STCS": "SizeTieredCompactionStrategy",
	"LCS":  "LeveledCompactionStrategy",
	"UCS":  "UnifiedCompactionStrategy",
	"TWCS": "TimeWindowCompactionStrategy",
}

// ReadLevels and WriteLevels are the consistency levels the settings allow.
var (
	ReadLevels  = []string{"ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_ONE", "LOCAL_QUORUM"}
	WriteLevels = []string{"ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_ONE", "LOCAL_QUORUM", "EACH_QUORUM"}
)

func init() { engine.Register(&Engine{}) }

// Engine is the cassandra engine. Its zero value is ready to use.
type Engine struct{}

// Name returns "cassandra".
func (*Engine) Name() string { return Name }

// TargetForm is how a target names the nodes; SCALELAB_CASSANDRA_TARGET
// may name them instead.
func (*Engine) TargetForm() (form, env string) {
	return "host[:port][,host[:port]...]", "SCALELAB_CASSANDRA_TARGET"
}

// FollowsAnnouncedAddresses reports that the driver reaches the nodes at
// the addresses the ring announces, which a proxy cannot route.
func (*Engine) FollowsAnnouncedAddresses() bool { return true }

// Description is one line for `scalelab list`.
func (*Engine) Description() string {
	return "Apache Cassandra over CQL (token-aware, consistency levels, SAI indexes); target: host:port[,host:port...] or --cluster"
}

var keyspaceRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,47}$`)

// Settings declares the engine's settings.
func (*Engine) Settings() []setting.Spec {
	return []setting.Spec{
		{Key: KeyReplication, Kind: setting.Int, Default: "0", Min: 0, Max: 16,
			Description: "replication factor of the keyspace (NetworkTopologyStrategy in the ring's data center); 0: the node count, at most 3"},
		{Key: KeyReadConsistency, Kind: setting.Enum, Default: "QUORUM", Allowed: ReadLevels,
			Description: "consistency level of reads and queries"},
		{Key: KeyWriteConsistency, Kind: setting.Enum, Default: "QUORUM", Allowed: WriteLevels,
			Description: "consistency level of writes"},
		{Key: KeyBatchSize, Kind: setting.Int, Default: "50", Min: 1, Max: 10000,
			Description: "rows per unlogged batch in bulk writes (local rings accept batches up to 4 MiB)"},
		{Key: KeyCompaction, Kind: setting.Enum, Default: "STCS", Allowed: []string{"STCS", "LCS", "UCS", "TWCS"},
			Description: "compaction strategy of the tables scenarios create: size-tiered, leveled, unified, time-window"},
		{Key: KeyTimeout, Kind: setting.Duration, Default: "30s", Min: 0.001, Max: 3600,
			Description: "client timeout of each request (class timeout); above the server's own timeouts on local rings (10 s reads, 5 s writes, 20 s scans)"},
		{Key: KeyKeyspace, Kind: setting.String, Default: "scalelab", Check: checkKeyspace,
			Description: "keyspace of the scenario's tables (created when missing, never dropped), so that several runs can share a ring; a table of the scenario's name there that scalelab did not create is refused"},
		{Key: KeyUser, Kind: setting.String, Default: "",
			Description: "login role (PasswordAuthenticator); the password comes from $" + PasswordEnv + " or the cluster's 0600 secret file, never from a flag"},
		{Key: KeyConns, Kind: setting.Int, Default: "2", Min: 1, Max: 64,
			Description: "connections per node"},
		{Key: KeyIndexWait, Kind: setting.Duration, Default: "5m", Min: 1, Max: 86400,
			Description: "how long to wait for a storage-attached index to be built and queryable on every node before failing, naming the node"},
		{Key: KeySchemaWait, Kind: setting.Duration, Default: "1m", Min: 1, Max: 3600,
			Description: "how long to wait for every node to agree on the schema after a CREATE or DROP before failing"},
		engine.ReplaceExistingSpec(Name),
	}
}

func checkKeyspace(v setting.Value) error {
	if !keyspaceRE.MatchString(v.String()) {
		return errors.New("a keyspace name: a lower-case letter, then up to 47 lower-case letters, digits or '_'")
	}
	return nil
}

// Options are the engine's resolved settings.
type Options struct {
	Replication      int // 0 until Open resolved it from the ring
	ReadConsistency  gocql.Consistency
	WriteConsistency gocql.Consistency
	BatchSize        int
	Compaction       string // STCS, LCS, UCS, TWCS
	Timeout          time.Duration
	Keyspace         string
	User             string
	Conns            int
	IndexWait        time.Duration // bound of the wait for an index on every node
	SchemaWait       time.Duration // bound of the wait for schema agreement
	ReplaceExisting  bool          // cassandra.replace_existing: Claim drops a table scalelab did not create
	// Mark is the comment of the tables the connection creates
	// (engine.Mark of the run; "" for a mark naming no scenario).
	Mark string
	// NodeNames maps a node's address to its name in a --cluster
	// ("127.0.0.2" to "node2"), for messages.
	NodeNames map[string]string
	// Translate maps the addresses the ring announces (host:port) to those
	// the load generator must use instead (a --cluster's link proxies).
	Translate map[string]string
}

// OptionsFrom reads the engine's settings from set; missing keys take
// their defaults.
func OptionsFrom(set *setting.Set) (Options, error) {
	get := setting.Getter(set, (&Engine{}).Settings())
	rc, err := gocql.ParseConsistencyWrapper(get(KeyReadConsistency).String())
	if err != nil {
		return Options{}, fmt.Errorf("%w: %s: %v", setting.ErrBadValue, KeyReadConsistency, err)
	}
	wc, err := gocql.ParseConsistencyWrapper(get(KeyWriteConsistency).String())
	if err != nil {
		return Options{}, fmt.Errorf("%w: %s: %v", setting.ErrBadValue, KeyWriteConsistency, err)
	}
	return Options{
		Replication:      int(get(KeyReplication).Int()),
		ReadConsistency:  rc,
		WriteConsistency: wc,
		BatchSize:        int(get(KeyBatchSize).Int()),
		Compaction:       get(KeyCompaction).String(),
		Timeout:          get(KeyTimeout).Duration(),
		Keyspace:         get(KeyKeyspace).String(),
		User:             get(KeyUser).String(),
		Conns:            int(get(KeyConns).Int()),
		IndexWait:        get(KeyIndexWait).Duration(),
		SchemaWait:       get(KeySchemaWait).Duration(),
		ReplaceExisting:  get(KeyReplaceExisting).Bool(),
	}, nil
}

// defaultTarget returns the target Open uses when neither a target nor a
// cluster is given: $SCALELAB_CASSANDRA_TARGET, else 127.0.0.1:9042 (with
// no login role: the user and password settings apply).
func defaultTarget() (target, user, password string, err error) {
	if v := os.Getenv("SCALELAB_CASSANDRA_TARGET"); v != "" {
		return v, "", "", nil
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(DefaultPort)), "", "", nil
}

var _ engine.TargetChecker = (*Engine)(nil)

// CheckTarget checks a target's form (host[:port] nodes, no credentials)
// without connecting.
func (*Engine) CheckTarget(target string) error {
	if target == "" {
		return nil // the default node, as Open finds it
	}
	if _, err := ParseTarget(target); err != nil {
		return fmt.Errorf("%w: cassandra target: %w", engine.ErrConfig, err)
	}
	return nil
}

// ParseTarget splits "host[:port][,host[:port]...]" into host:port
// addresses (port 9042 when missing). Credentials are refused: passwords
// come from the environment or a secret file.
func ParseTarget(target string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(target, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if at := strings.LastIndex(part, "@"); at >= 0 {
			return nil, fmt.Errorf("target node %q: put no credentials in the target; set %s and the password in $%s", part[at+1:], KeyUser, PasswordEnv)
		}
		if strings.Contains(part, "://") {
			return nil, fmt.Errorf("target node %q: give host:port without a scheme (e.g. 127.0.0.1:9042)", part)
		}
		host, port, err := net.SplitHostPort(part)
		if err != nil {
			host, port = part, strconv.Itoa(DefaultPort)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("target node %q: port %q is not a number from 1 to 65535", part, port)
		}
		if host == "" {
			return nil, fmt.Errorf("target node %q: no host", part)
		}
		out = append(out, net.JoinHostPort(host, port))
	}
	if len(out) == 0 {
		return nil, errors.New("empty target: give host:port[,host:port...] (e.g. 127.0.0.1:9042)")
	}
	return out, nil
}

// Open connects to the target's nodes (or the cluster's), creates the
// keyspace when missing (or alters its replication to the setting) and
// returns the connection. Failures to reach the ring wrap
// engine.ErrUnreachable.
func (e *Engine) Open(ctx context.Context, cfg engine.Config) (engine.Conn, error) {
	opts, err := OptionsFrom(cfg.Settings)
	if err != nil {
		return nil, err
	}
	opts.Mark = engine.Mark(cfg.Scenario, cfg.Run)
	target := cfg.Target
	password := os.Getenv(PasswordEnv)
	if cfg.Cluster != nil {
		target = cfg.Cluster.Target
		if password == "" {
			if password, err = cfg.Cluster.Password(); err != nil {
				return nil, fmt.Errorf("open cassandra: %w", err)
			}
		}
		if opts.User == "" {
			opts.User = cfg.Cluster.User
		}
	}
	if target == "" {
		var user, pw string
		if target, user, pw, err = defaultTarget(); err != nil {
			return nil, fmt.Errorf("open cassandra: %w: %w", engine.ErrUnreachable, err)
		}
		if opts.User == "" {
			opts.User = user
		}
		if password == "" {
			password = pw
		}
	}
	if cfg.Cluster != nil {
		opts.NodeNames = map[string]string{}
		for _, n := range cfg.Cluster.Nodes {
			opts.NodeNames[n.Host] = n.Name
			if n.Client != "" {
				if opts.Translate == nil {
					opts.Translate = map[string]string{}
				}
				opts.Translate[net.JoinHostPort(n.Host, strconv.Itoa(n.Port))] = n.Client
			}
		}
	}
	hosts, err := ParseTarget(target)
	if err != nil {
		return nil, fmt.Errorf("%w: --target: %v", setting.ErrBadValue, err)
	}
	if opts.User != "" && password == "" {
		return nil, fmt.Errorf("open cassandra: %w: role %q needs a password: set $%s", setting.ErrBadValue, opts.User, PasswordEnv)
	}
	c, err := Dial(ctx, hosts, opts, password)
	if err != nil {
		return nil, err
	}
	if err := c.ensureKeyspace(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Conn is an open session on a ring, bound to one keyspace.
type Conn struct {
	s      *gocql.Session
	opts   Options
	hosts  []string
	dc     string
	nodes  int
	rfNote string

	infoMu sync.Mutex
}

// Dial opens a session on hosts (host:port) with opts and password (""
// without authentication), token-aware over round robin in the local data
// center. It does not create the keyspace: Open does.
func Dial(ctx context.Context, hosts []string, opts Options, password string) (*Conn, error) {
	cc := gocql.NewCluster(hosts...)
	cc.Timeout = opts.Timeout
	cc.ConnectTimeout = min(opts.Timeout, 10*time.Second)
	cc.Dialer = netdial.Dialer{Timeout: cc.ConnectTimeout, KeepAlive: cc.SocketKeepalive}
	cc.WriteTimeout = opts.Timeout
	cc.NumConns = max(opts.Conns, 1)
	cc.Consistency = opts.ReadConsistency
	cc.RetryPolicy = nil // failures show in the results instead of being retried away
	cc.ReconnectInterval = time.Second
	cc.DefaultIdempotence = true
	if opts.SchemaWait > 0 {
		// the driver's own bound comes after AwaitSchema's, whose error
		// names the setting
		cc.MaxWaitSchemaAgreement = opts.SchemaWait + 10*time.Second
	}
	cc.Logger = gocql.NewLogger(gocql.LogLevelNone)
	if len(opts.Translate) > 0 {
		cc.AddressTranslator = gocql.AddressTranslatorFunc(func(addr net.IP, port int) (net.IP, int) {
			to, ok := opts.Translate[net.JoinHostPort(addr.String(), strconv.Itoa(port))]
			if !ok {
				return addr, port
			}
			h, p, err := net.SplitHostPort(to)
			if err != nil {
				return addr, port
			}
			pn, _ := strconv.Atoi(p)
			return net.ParseIP(h), pn
		})
	}
	if opts.User != "" {
		cc.Authenticator = gocql.PasswordAuthenticator{Username: opts.User, Password: password}
	}
	dc, nodes, err := probe(ctx, cc)
	if err != nil && isAuthFailure(err) {
		return nil, engine.AuthError("open cassandra at "+strings.Join(hosts, ","), opts.User,
			engine.PasswordSources{Env: PasswordEnv}, fmt.Errorf("%w (a role is set by --set %s)", err, KeyUser))
	}
	if err != nil {
		return nil, fmt.Errorf("open cassandra at %s: %w: %w", strings.Join(hosts, ","), engine.ErrUnreachable, err)
	}
	cc.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.DCAwareRoundRobinPolicy(dc), gocql.ShuffleReplicas())
	s, err := cc.CreateSession()
	if err != nil {
		return nil, fmt.Errorf("open cassandra at %s: %w: %w", strings.Join(hosts, ","), engine.ErrUnreachable, err)
	}
	c := &Conn{s: s, opts: opts, hosts: hosts, dc: dc, nodes: nodes}
	if c.opts.Replication == 0 {
		c.opts.Replication = min(nodes, 3)
		c.rfNote = "default: node count, at most 3"
	}
	if c.opts.Replication > nodes {
		s.Close()
		return nil, fmt.Errorf("%w: %s=%d but the ring has %d nodes: replicas cannot be placed (use 1 to %d)",
			setting.ErrBadValue, KeyReplication, c.opts.Replication, nodes, nodes)
	}
	return c, nil
}

// probe connects once with a plain round-robin session to learn the data
// center of the first node and the ring's node count.
func probe(ctx context.Context, cc *gocql.ClusterConfig) (string, int, error) {
	pc := *cc
	pc.PoolConfig.HostSelectionPolicy = gocql.RoundRobinHostPolicy()
	pc.NumConns = 1
	s, err := pc.CreateSession()
	if err != nil {
		return "", 0, err
	}
	defer s.Close()
	var dc string
	if err := s.Query("SELECT data_center FROM system.local").Consistency(gocql.One).ScanContext(ctx, &dc); err != nil {
		return "", 0, fmt.Errorf("read system.local: %w", err)
	}
	nodes := 1
	iter := s.Query("SELECT peer FROM system.peers").Consistency(gocql.One).IterContext(ctx)
	var peer net.IP
	for iter.Scan(&peer) {
		nodes++
	}
	if err := iter.Close(); err != nil {
		return "", 0, fmt.Errorf("read system.peers: %w", err)
	}
	return dc, nodes, nil
}

// ensureKeyspace creates the keyspace with the replication factor, or
// alters an existing one whose factor differs.
func (c *Conn) ensureKeyspace(ctx context.Context) error {
	repl := fmt.Sprintf("{'class': 'NetworkTopologyStrategy', '%s': %d}", c.dc, c.opts.Replication)
	q := fmt.Sprintf("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = %s", c.opts.Keyspace, repl)
	if err := c.s.Query(q).Consistency(gocql.All).ExecContext(ctx); err != nil {
		return fmt.Errorf("create keyspace %s: %w", c.opts.Keyspace, c.Classify(ctx, err))
	}
	var r map[string]string
	err := c.s.Query("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?", c.opts.Keyspace).
		Consistency(gocql.One).ScanContext(ctx, &r)
	if err != nil {
		return fmt.Errorf("read keyspace %s: %w", c.opts.Keyspace, c.Classify(ctx, err))
	}
	if r[c.dc] != strconv.Itoa(c.opts.Replication) || !strings.HasSuffix(r["class"], "NetworkTopologyStrategy") {
		// a keyspace that holds a table scalelab did not create is the
		// user's: its replication is theirs, and stays as it is
		if foreign, err := c.foreignTables(ctx); err != nil {
			return err
		} else if foreign != "" {
			c.rfNote = fmt.Sprintf("keyspace %s kept at its own replication %v: it holds %s, which scalelab did not create", c.opts.Keyspace, r, foreign)
			return c.AwaitSchema(ctx)
		}
		q := fmt.Sprintf("ALTER KEYSPACE %s WITH replication = %s", c.opts.Keyspace, repl)
		if err := c.s.Query(q).ExecContext(ctx); err != nil {
			return fmt.Errorf("alter keyspace %s: %w", c.opts.Keyspace, c.Classify(ctx, err))
		}
	}
	return c.AwaitSchema(ctx)
}

// WithKeyspace returns a connection that shares c's session (closing
// either closes both) but is bound to keyspace name, created like Open
// creates the configured one: for a scenario or a test that keeps several
// data sets apart on one ring.
func (c *Conn) WithKeyspace(ctx context.Context, name string) (*Conn, error) {
	if !keyspaceRE.MatchString(name) {
		return nil, fmt.Errorf("%w: keyspace %q: a lower-case letter, then up to 47 lower-case letters, digits or '_'", setting.ErrBadValue, name)
	}
	d := &Conn{s: c.s, opts: c.opts, hosts: c.hosts, dc: c.dc, nodes: c.nodes, rfNote: c.rfNote}
	d.opts.Keyspace = name
	if err := d.ensureKeyspace(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// Session returns the underlying gocql session.
func (c *Conn) Session() *gocql.Session { return c.s }

// Options returns the resolved settings (Replication resolved from the
// ring when it was 0).
func (c *Conn) Options() Options { return c.opts }

// Keyspace returns the keyspace of the scenario's tables.
func (c *Conn) Keyspace() string { return c.opts.Keyspace }

// Nodes returns the ring's node count as seen at Open.
func (c *Conn) Nodes() int { return c.nodes }

// DataCenter returns the data center of the first node reached.
func (c *Conn) DataCenter() string { return c.dc }

// Table returns a keyspace-qualified table name.
func (c *Conn) Table(name string) string { return c.opts.Keyspace + "." + name }

// Read returns a query at the read consistency.
func (c *Conn) Read(stmt string, args ...any) *gocql.Query {
	return c.s.Query(stmt, args...).Consistency(c.opts.ReadConsistency)
}

// Write returns a query at the write consistency.
func (c *Conn) Write(stmt string, args ...any) *gocql.Query {
	return c.s.Query(stmt, args...).Consistency(c.opts.WriteConsistency)
}

// batchesInFlight is how many batches WriteBatch sends at once.
const batchesInFlight = 2

// WriteBatch writes rows with stmt (one row's bind values each) in
// unlogged batches of BatchSize rows at the write consistency, up to two
// batches in flight. Rows of one batch may span partitions: it is a bulk
// transfer, not an atomic unit.
func (c *Conn) WriteBatch(ctx context.Context, stmt string, rows [][]any) error {
	size := max(c.opts.BatchSize, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, batchesInFlight)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for lo := 0; lo < len(rows); lo += size {
		part := rows[lo:min(lo+size, len(rows))]
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			b := c.s.Batch(gocql.UnloggedBatch).Consistency(c.opts.WriteConsistency)
			for _, r := range part {
				b.Query(stmt, r...)
			}
			if err := b.ExecContext(ctx); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = c.Classify(ctx, err)
				}
				mu.Unlock()
				cancel()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// Compaction returns the CQL compaction option of the configured strategy.
func (c *Conn) Compaction() string {
	return fmt.Sprintf("{'class': '%s'}", compactions[c.opts.Compaction])
}

// CreateTable creates keyspace.name with the column and key definition
// (e.g. "id bigint PRIMARY KEY, name text"), the configured compaction and
// scalelab's mark as its comment, when missing, then waits for schema
// agreement. The caller has claimed the table (Claim): CREATE IF NOT
// EXISTS leaves an existing table as it is.
func (c *Conn) CreateTable(ctx context.Context, name, definition string) error {
	q := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (%s) WITH compaction = %s AND comment = %s",
		c.Table(name), definition, c.Compaction(), cqlString(c.ownerComment()))
	if err := c.s.Query(q).ExecContext(ctx); err != nil {
		return fmt.Errorf("create table %s: %w", name, c.Classify(ctx, err))
	}
	return c.AwaitSchema(ctx)
}

// DropTable drops keyspace.name if it exists and scalelab created it (or
// cassandra.replace_existing is set); a table without the mark is refused
// (Claim).
func (c *Conn) DropTable(ctx context.Context, name string) error {
	if err := c.Claim(ctx, name); err != nil {
		return err
	}
	return c.drop(ctx, name)
}

// drop drops keyspace.name if it exists, whoever created it.
func (c *Conn) drop(ctx context.Context, name string) error {
	if err := c.s.Query("DROP TABLE IF EXISTS " + c.Table(name)).ExecContext(ctx); err != nil {
		return fmt.Errorf("drop table %s: %w", name, c.Classify(ctx, err))
	}
	return c.AwaitSchema(ctx)
}

// Truncate empties keyspace.name on every replica, if scalelab created it
// (or cassandra.replace_existing is set, which drops a table without the
// mark instead: Claim).
func (c *Conn) Truncate(ctx context.Context, name string) error {
	if err := c.Claim(ctx, name); err != nil {
		return err
	}
	if err := c.s.Query("TRUNCATE " + c.Table(name)).Consistency(gocql.All).ExecContext(ctx); err != nil {
		return fmt.Errorf("truncate %s: %w", name, c.Classify(ctx, err))
	}
	return nil
}

// AwaitSchema waits until every node has the same schema version.
func (c *Conn) AwaitSchema(ctx context.Context) error {
	f := wait.For{What: "every node to agree on the schema of keyspace " + c.opts.Keyspace, Bound: c.opts.SchemaWait,
		Setting: KeySchemaWait, Hint: "a node may be down or overloaded: scalelab cluster status, or raise " + KeySchemaWait}
	if err := f.Do(ctx, c.s.AwaitSchemaAgreement); err != nil {
		var te *wait.TimeoutError
		if errors.As(err, &te) {
			return err
		}
		return fmt.Errorf("await schema agreement: %w", c.Classify(ctx, err))
	}
	return nil
}

// Close closes the session.
func (c *Conn) Close() error {
	c.s.Close()
	return nil
}

// Info reports the server version, node count, data center, replication
// factor and consistency levels; no credentials.
func (c *Conn) Info(ctx context.Context) (engine.Info, error) {
	c.infoMu.Lock()
	defer c.infoMu.Unlock()
	var version string
	if err := c.s.Query("SELECT release_version FROM system.local").Consistency(gocql.One).ScanContext(ctx, &version); err != nil {
		return engine.Info{}, fmt.Errorf("cassandra version: %w", c.Classify(ctx, err))
	}
	rf := strconv.Itoa(c.opts.Replication)
	if c.rfNote != "" {
		rf += " (" + c.rfNote + ")"
	}
	return engine.Info{
		Engine:  Name,
		Version: version,
		Target:  strings.Join(c.hosts, ","),
		Extra: map[string]string{
			"nodes":             strconv.Itoa(c.nodes),
			"data_center":       c.dc,
			"replication":       rf,
			"read_consistency":  c.opts.ReadConsistency.String(),
			"write_consistency": c.opts.WriteConsistency.String(),
			"keyspace":          c.opts.Keyspace,
			"compaction":        c.opts.Compaction,
			"batch_size":        strconv.Itoa(c.opts.BatchSize),
			"user":              c.opts.User,
			"routing":           "token-aware, round robin in " + c.dc,
		},
	}, nil
}

// Classify gives err its outcome class: client and coordinator timeouts
// are timeout; unavailable replicas, overload, bootstrapping nodes and
// truncation errors are rejected; no reachable host is refused. A context
// error is kept as such.
func (c *Conn) Classify(ctx context.Context, err error) error { return Classify(ctx, err) }

// Classify is Conn.Classify without a connection.
func Classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ended, e := engine.Ended(ctx, err); ended {
		return e
	}
	var (
		wt *gocql.RequestErrWriteTimeout
		rt *gocql.RequestErrReadTimeout
		un *gocql.RequestErrUnavailable
		ov *gocql.RequestErrOverloaded
		bs *gocql.RequestErrBootstrapping
		tr *gocql.RequestErrTruncate
		wf *gocql.RequestErrWriteFailure
		rf *gocql.RequestErrReadFailure
	)
	switch {
	case errors.As(err, &wt), errors.As(err, &rt), errors.Is(err, gocql.ErrTimeoutNoResponse):
		return metrics.WithClass(metrics.Timeout, err)
	case errors.As(err, &un), errors.As(err, &ov), errors.As(err, &bs), errors.As(err, &tr),
		errors.As(err, &wf), errors.As(err, &rf), errors.Is(err, gocql.ErrUnavailable):
		return metrics.WithClass(metrics.Rejected, err)
	case errors.Is(err, gocql.ErrNoConnections), errors.Is(err, gocql.ErrConnectionClosed), errors.Is(err, gocql.ErrSessionClosed):
		return metrics.WithClass(metrics.Refused, err)
	}
	return err
}

// replicas is how many replicas of a factor rf a consistency level waits
// for (one data center).
func replicas(c gocql.Consistency, rf int) int {
	switch c {
	case gocql.Any:
		return 0
	case gocql.One, gocql.LocalOne:
		return 1
	case gocql.Two:
		return 2
	case gocql.Three:
		return 3
	case gocql.Quorum, gocql.LocalQuorum, gocql.EachQuorum:
		return rf/2 + 1
	case gocql.All:
		return rf
	}
	return 1
}

// Strong reports whether reads see every acknowledged write: the replicas
// a read asks and those a write waited for overlap (R + W > RF). With
// weaker levels a read may miss a recent write (scenarios then treat a
// miss as not found, not as an integrity error).
func (c *Conn) Strong() bool {
	rf := c.opts.Replication
	return replicas(c.opts.ReadConsistency, rf)+replicas(c.opts.WriteConsistency, rf) > rf
}

// isAuthFailure reports whether err is the cluster refusing the login: a
// wrong password or role, or no role given to a cluster that wants one.
func isAuthFailure(err error) bool {
	var re gocql.RequestError
	if errors.As(err, &re) && re.Code() == gocql.ErrCodeCredentials {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "authentication required") || strings.Contains(msg, "password are incorrect") || strings.Contains(msg, "Bad credentials")
}
