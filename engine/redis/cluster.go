package redis

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/cluster/sysuser"
	"github.com/scalelab/scalelab/setting"
)

// Local servers: the binary, and the params of their clusters.
const (
	// BinaryEnv names a redis-server binary to use instead of the one on
	// PATH.
	BinaryEnv = "SCALELAB_REDIS_SERVER"
	// ParamConfig is the prefix of the cluster params holding the
	// configuration directives scalelab wrote.
	ParamConfig = "config."
	// ParamOSUser is the cluster param holding the system user the server
	// runs as when scalelab is root.
	ParamOSUser = "os_user"
	// SystemUser is that user: Debian's package creates it (else nobody).
	SystemUser = "redis"
)

// ErrNoServer means the redis-server binary is missing.
var ErrNoServer = errors.New("redis-server not found")

func init() { cluster.Register(Provisioner{}) }

// Provisioner starts local Redis servers: one node on a free loopback
// port, with a generated password, no persistence, its own directory.
type Provisioner struct{}

var _ cluster.HealthChecker = Provisioner{}

// Engine returns "redis".
func (Provisioner) Engine() string { return Name }

// baseConfig is written to every server's redis.conf before the options:
// loopback only, a password, protected mode, no persistence snapshots (a
// load test's data is thrown away with the cluster), logging to stdout
// (the node's log file).
var baseConfig = [][2]string{
	{"protected-mode", "yes"},
	{"daemonize", "no"},
	{"save", `""`},
	{"logfile", `""`},
	{"loglevel", "notice"},
	{"databases", "16"},
	{"maxclients", "10000"},
	{"tcp-backlog", "511"},
}

// reserved are directives the options may not change: they keep the
// server on loopback, behind its password, in its own directory.
var reserved = []string{
	"bind", "port", "requirepass", "protected-mode", "dir", "daemonize",
	"logfile", "include", "unixsocket", "unixsocketperm", "pidfile", "user",
	"aclfile", "masterauth", "masteruser", "replicaof", "slaveof", "tls-port",
	"enable-debug-command", "enable-module-command", "loadmodule", "dbfilename", "appenddirname",
}

var directiveName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// The declared options: the redis.conf directives a cache tier is tuned
// by.
const (
	OptMaxMemory       = "maxmemory"
	OptMaxMemoryPolicy = "maxmemory-policy"
	OptAppendOnly      = "appendonly"
	OptIOThreads       = "io-threads"
)

// Options declares what redis clusters take: one server, the directives a
// cache tier is tuned by, and any other redis.conf directive.
func (Provisioner) Options() cluster.Options {
	return cluster.Options{
		Specs: []setting.Spec{
			cluster.SingleNode(Name),
			{Key: OptMaxMemory, Kind: setting.Size, Default: "0", Description: "memory for data (e.g. 256mb, 1gb); 0: no limit"},
			{Key: OptMaxMemoryPolicy, Kind: setting.Enum, Default: "noeviction",
				Allowed:     []string{"noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"},
				Description: "what a full server does: refuse writes (noeviction) or evict keys"},
			{Key: OptAppendOnly, Kind: setting.Bool, Default: "false", Description: "append-only file persistence of every write"},
			{Key: OptIOThreads, Kind: setting.Int, Default: "1", Min: 1, Max: 128, Description: "threads for network I/O"},
		},
		Free: cluster.ConfigFree("redis.conf directives (hz=100, lazyfree-lazy-eviction=yes)", directiveName.MatchString, reserved,
			"the server listens on loopback only, with a password"),
	}
}

// config returns the directives of a server: baseConfig, the declared
// options, then the other redis.conf directives given.
func config(spec cluster.Spec) ([][2]string, error) {
	opts, err := cluster.Resolve(Provisioner{}, spec)
	if err != nil {
		return nil, err
	}
	yesNo := map[bool]string{true: "yes", false: "no"}
	conf := append([][2]string{}, baseConfig...)
	conf = append(conf,
		[2]string{OptMaxMemory, strconv.FormatInt(opts.Get(OptMaxMemory).Int(), 10)},
		[2]string{OptMaxMemoryPolicy, opts.Get(OptMaxMemoryPolicy).String()},
		[2]string{OptAppendOnly, yesNo[opts.Get(OptAppendOnly).Bool()]},
		[2]string{OptIOThreads, strconv.FormatInt(opts.Get(OptIOThreads).Int(), 10)})
	return append(conf, opts.Free...), nil
}

// Binary returns the redis-server binary: $SCALELAB_REDIS_SERVER, else
// redis-server on PATH, else Debian's /usr/bin/redis-server; the error
// wraps ErrNoServer and says how to install it.
func Binary() (string, error) { return server.FindBinary() }

// Up writes the server's redis.conf (0600: it holds the password) in its
// own directory, starts it detached on a free loopback port and returns
// once it answers an authenticated PING.
func (Provisioner) Up(ctx context.Context, spec cluster.Spec, st *cluster.State) error {
	conf, err := config(spec)
	if err != nil {
		return err
	}
	bin, err := Binary()
	if err != nil {
		return err
	}
	ou, err := serverUser()
	if err != nil {
		return err
	}
	if err := ou.Reachable(ctx, st.Dir); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	if st.Params == nil {
		st.Params = map[string]string{}
	}
	if ou != nil {
		st.Params[ParamOSUser] = ou.Name()
	}
	cluster.RecordVersion(ctx, st, bin, "--version")
	st.User, st.SecretFile = "default", filepath.Join(st.Dir, "password")
	pw, err := cluster.NewSecret(st.SecretFile)
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	st.Auth = "requirepass: a generated password for the default user (in the secret file); loopback only, protected mode"
	node, err := server.Node(st)
	if err != nil {
		return err
	}
	if err := ou.Mkdir(node.DataDir); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	var b strings.Builder
	b.WriteString("# written by scalelab cluster up\n")
	for _, d := range conf {
		fmt.Fprintf(&b, "%s %s\n", d[0], d[1])
		st.Params[ParamConfig+d[0]] = d[1]
	}
	fmt.Fprintf(&b, "bind %s\nport %d\ndir %s\nrequirepass %s\n", node.Host, node.Port, node.DataDir, pw)
	confFile := filepath.Join(node.DataDir, "redis.conf")
	if err := os.WriteFile(confFile, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("redis: write %s: %w", confFile, err)
	}
	if err := ou.Own(confFile); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	node.Cmd = ou.Wrap([]string{bin, confFile})
	return server.Start(ctx, st, node, func(addr string) string { return Target{Addr: addr}.Redacted() })
}

// serverUser is the system user the server runs as when scalelab is
// root (nil otherwise): SystemUser, else nobody (a redis-server that did
// not come from Debian's package).
func serverUser() (*sysuser.User, error) {
	u, err := sysuser.ForServer(SystemUser, "Redis", "apt-get install -y redis-server")
	if err != nil {
		if nobody, nerr := sysuser.ForServer("nobody", "Redis", "the base system"); nerr == nil {
			return nobody, nil
		}
	}
	return u, err
}

// connectNode opens a client of one connection to the server at addr,
// with the password of st, its commands and connecting 2 s at most each;
// Connect checks the connection with an authenticated PING.
func connectNode(ctx context.Context, st *cluster.State, addr string) (*Conn, error) {
	password, err := st.Password()
	if err != nil {
		return nil, err
	}
	o := Options{PoolSize: 1, Timeout: 2 * time.Second, ConnectTimeout: 2 * time.Second}
	return Connect(ctx, Target{Addr: addr, Password: password}, o)
}

// ping sends an authenticated PING to the server at addr (2 s at most).
func ping(ctx context.Context, st *cluster.State, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := connectNode(ctx, st, addr)
	if err != nil {
		return err
	}
	return c.Close()
}

// server is how the cluster package starts a Redis server, asks for its
// facts and judges its health.
var server = cluster.OneServer{
	Engine: Name, Binary: "redis-server", BinaryEnv: BinaryEnv, Package: "redis-server", NotFound: ErrNoServer,
	Answers:  ping,
	Facts:    nodeInfo,
	FactKeys: []string{"redis_version", "connected_clients", "used_memory_human", "maxmemory_human", "db0"},
}

// Status reports whether the server runs and, from INFO, its version,
// clients, memory and keys.
func (Provisioner) Status(ctx context.Context, st *cluster.State) ([]cluster.NodeStatus, error) {
	return server.Status(ctx, st)
}

// nodeInfo reads INFO from the server at addr (2 s at most).
func nodeInfo(ctx context.Context, st *cluster.State, addr string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := connectNode(ctx, st, addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.serverInfo(ctx, "server", "clients", "memory", "keyspace")
}

// Health is green when the server answers an authenticated PING within
// 2 s, red when its process runs but it does not answer, unreachable when
// its process is gone.
func (Provisioner) Health(ctx context.Context, st *cluster.State) (cluster.Health, error) {
	return server.Health(ctx, st)
}
