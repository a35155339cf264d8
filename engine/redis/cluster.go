package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/cluster/sysuser"
)

// Local servers: the binary and how to get it.
const (
	// BinaryEnv names a redis-server binary to use instead of the one on
	// PATH.
	BinaryEnv = "SCALELAB_REDIS_SERVER"
	// InstallHint says how to get the server.
	InstallHint = "install it with `make setup` or `apt-get update && apt-get install -y redis-server` (Debian's Redis), or point " + BinaryEnv + " at a redis-server binary"
	// ParamVersion is the cluster param holding `redis-server --version`.
	ParamVersion = "version"
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

var (
	_ cluster.Provisioner   = Provisioner{}
	_ cluster.HealthChecker = Provisioner{}
)

// Engine returns "redis".
func (Provisioner) Engine() string { return Name }

// baseConfig is written to every server's redis.conf before the --opt
// directives: loopback only, a password, protected mode, no persistence
// (a load test's data is thrown away with the cluster), logging to
// stdout (the node's log file).
var baseConfig = [][2]string{
	{"protected-mode", "yes"},
	{"daemonize", "no"},
	{"save", `""`},
	{"appendonly", "no"},
	{"logfile", `""`},
	{"loglevel", "notice"},
	{"databases", "16"},
	{"maxclients", "10000"},
	{"tcp-backlog", "511"},
}

// reserved are directives --opt may not change: they keep the server on
// loopback, behind its password, in its own directory.
var reserved = map[string]bool{
	"bind": true, "port": true, "requirepass": true, "protected-mode": true, "dir": true, "daemonize": true,
	"logfile": true, "include": true, "unixsocket": true, "unixsocketperm": true, "pidfile": true, "user": true,
	"aclfile": true, "masterauth": true, "masteruser": true, "replicaof": true, "slaveof": true, "tls-port": true,
	"enable-debug-command": true, "enable-module-command": true, "loadmodule": true, "dbfilename": true, "appenddirname": true,
}

var directiveName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// config returns the directives of a server: baseConfig, then the --opt
// ones; it refuses reserved directives, names that are not directives and
// values on several lines.
func config(spec cluster.Spec) ([][2]string, error) {
	if spec.Nodes > 1 || spec.Replicas > 0 {
		return nil, errors.New("redis clusters have one server (leave out --nodes and --replicas)")
	}
	if spec.Heap != "" || len(spec.Roles) > 0 {
		return nil, errors.New("redis clusters take no --heap or --roles (use --opt maxmemory=1gb)")
	}
	conf := append([][2]string{}, baseConfig...)
	keys := make([]string, 0, len(spec.Options))
	for k := range spec.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := spec.Options[k]
		switch {
		case k == "exit_with_pid": // tests' option for JVM nodes; tests stop these servers themselves
		case reserved[k]:
			return nil, fmt.Errorf("--opt %s: scalelab sets %s itself (the server listens on loopback only, with a password)", k, k)
		case !directiveName.MatchString(k):
			return nil, fmt.Errorf("--opt %s: not a redis.conf directive name (such as maxmemory=1gb, maxmemory-policy=allkeys-lru, appendonly=yes, io-threads=2)", k)
		case strings.ContainsAny(v, "\r\n"):
			return nil, fmt.Errorf("--opt %s: the value is on several lines", k)
		default:
			conf = append(conf, [2]string{k, v})
		}
	}
	return conf, nil
}

// Binary returns the redis-server binary: $SCALELAB_REDIS_SERVER, else
// redis-server on PATH, else Debian's /usr/bin/redis-server; the error
// wraps ErrNoServer and says how to install it.
func Binary() (string, error) {
	return cluster.FindBinary(ErrNoServer, BinaryEnv, "redis-server", InstallHint, "/usr/bin")
}

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
	if out, err := exec.CommandContext(ctx, bin, "--version").Output(); err == nil {
		st.Params[ParamVersion] = strings.TrimSpace(string(out))
	}
	st.User, st.SecretFile = "default", filepath.Join(st.Dir, "password")
	pw, err := cluster.NewSecret(st.SecretFile)
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	st.Auth = "requirepass: a generated password for the default user (in the secret file); loopback only, protected mode"
	port, err := cluster.FreePort(cluster.Loopback)
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	node := cluster.Node{Name: "node1", Role: "server", Host: cluster.Loopback, Port: port, Ports: map[string]int{"redis": port},
		DataDir: filepath.Join(st.Dir, "node1"), LogFile: filepath.Join(st.Dir, "node1.log")}
	if err := ou.Mkdir(node.DataDir); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	var b strings.Builder
	b.WriteString("# written by scalelab cluster up\n")
	for _, d := range conf {
		fmt.Fprintf(&b, "%s %s\n", d[0], d[1])
		st.Params[ParamConfig+d[0]] = d[1]
	}
	fmt.Fprintf(&b, "bind %s\nport %d\ndir %s\nrequirepass %s\n", node.Host, port, node.DataDir, pw)
	confFile := filepath.Join(node.DataDir, "redis.conf")
	if err := os.WriteFile(confFile, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("redis: write %s: %w", confFile, err)
	}
	if err := ou.Own(confFile); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	node.Cmd = ou.Wrap([]string{bin, confFile})
	pid, cg, err := st.StartNode(node.Name, node.Cmd, node.DataDir, node.LogFile, nil)
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	node.PID, node.Cgroup = pid, cg
	st.Nodes = append(st.Nodes, node)
	if err := st.Save(); err != nil {
		return err
	}
	addr := node.ClientAddress()
	st.Target = Target{Addr: addr}.Redacted()
	if err := cluster.WaitNodes(ctx, st, "redis at "+addr, 50*time.Millisecond, func() bool { return ping(ctx, addr, pw) == nil }); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	return nil
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

// ping sends an authenticated PING to the server at addr (2 s at most).
func ping(ctx context.Context, addr, password string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	o := Options{PoolSize: 1, Timeout: 2 * time.Second, ConnectTimeout: 2 * time.Second}
	c, err := Connect(ctx, Target{Addr: addr, Password: password}, o)
	if err != nil {
		return err
	}
	return c.Close()
}

// Status reports whether the server runs and, from INFO, its version,
// clients, memory and keys.
func (Provisioner) Status(ctx context.Context, st *cluster.State) ([]cluster.NodeStatus, error) {
	pw, err := st.Password()
	if err != nil {
		return nil, err
	}
	out := make([]cluster.NodeStatus, 0, len(st.Nodes))
	for _, n := range st.Nodes {
		ns := cluster.NodeStatus{Node: n, Alive: cluster.Alive(n.PID), Detail: map[string]string{}}
		if ns.Alive {
			fields, err := nodeInfo(ctx, n, pw)
			if err != nil {
				ns.Detail["error"] = err.Error()
			}
			for _, k := range []string{"redis_version", "connected_clients", "used_memory_human", "maxmemory_human", "db0"} {
				if v, ok := fields[k]; ok {
					ns.Detail[k] = v
				}
			}
		}
		out = append(out, ns)
	}
	return out, nil
}

// nodeInfo reads INFO from a node (2 s at most).
func nodeInfo(ctx context.Context, n cluster.Node, password string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	o := Options{PoolSize: 1, Timeout: 2 * time.Second, ConnectTimeout: 2 * time.Second}
	c, err := Connect(ctx, Target{Addr: net.JoinHostPort(n.Host, strconv.Itoa(n.Port)), Password: password}, o)
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
	h := cluster.Health{Status: cluster.Unreachable, Of: len(st.Nodes), Detail: map[string]string{}}
	pw, err := st.Password()
	if err != nil {
		return h, err
	}
	for _, n := range st.Nodes {
		switch {
		case !cluster.Alive(n.PID):
			h.Detail[n.Name] = "down"
		case ping(ctx, net.JoinHostPort(n.Host, strconv.Itoa(n.Port)), pw) != nil:
			h.Detail[n.Name] = "not answering"
			if h.Status == cluster.Unreachable {
				h.Status = cluster.Red
			}
		default:
			h.Nodes++
		}
	}
	if h.Nodes == len(st.Nodes) && h.Nodes > 0 {
		h.Status = cluster.Green
	}
	return h, nil
}
