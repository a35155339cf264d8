package memcached

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/setting"
)

// Local servers: the binary and the user it runs as.
const (
	// BinaryEnv names a memcached binary to use instead of the one on
	// PATH.
	BinaryEnv = "SCALELAB_MEMCACHED"
	// SystemUser runs the server when scalelab runs as root (memcached
	// refuses root without -u); Debian's memcached package creates it.
	SystemUser = "memcache"
)

// ErrNoServer means the memcached binary is missing.
var ErrNoServer = errors.New("memcached not found")

func init() { cluster.Register(Provisioner{}) }

// Provisioner starts local memcached servers: one node on a free loopback
// port. The server runs without authentication: it listens on 127.0.0.1
// only, TCP only.
type Provisioner struct{}

var _ cluster.HealthChecker = Provisioner{}

// Engine returns "memcached".
func (Provisioner) Engine() string { return Name }

// The options memcached clusters take besides nodes.
const (
	OptMemoryMB       = "memory_mb"
	OptThreads        = "threads"
	OptMaxConnections = "max_connections"
	OptEvictions      = "evictions"
)

// Options declares what memcached clusters take: one server, its memory,
// threads and connections, and whether it evicts.
func (Provisioner) Options() cluster.Options {
	return cluster.Options{Specs: []setting.Spec{
		cluster.SingleNode(Name),
		{Key: OptMemoryMB, Kind: setting.Int, Default: "1024", Min: 8, Max: 1 << 20, Description: "memory for items in MB (memcached allocates it as items come; its --memory-limit)"},
		{Key: OptThreads, Kind: setting.Int, Default: "4", Min: 1, Max: 256, Description: "worker threads (its --threads)"},
		{Key: OptMaxConnections, Kind: setting.Int, Default: "1024", Min: 16, Max: 1 << 20, Description: "simultaneous connections (its --conn-limit)"},
		{Key: OptEvictions, Kind: setting.Enum, Default: "on", Allowed: []string{"on", "off"},
			Description: "on: a full server evicts the least recently used items; off: it refuses writes (SERVER_ERROR, classed rejected)"},
	}}
}

// flags returns the server's command-line flags from spec's options (the
// address, port and user are added by Up) and the options as cluster
// params.
func flags(spec cluster.Spec) ([]string, map[string]string, error) {
	opts, err := cluster.Resolve(Provisioner{}, spec)
	if err != nil {
		return nil, nil, err
	}
	out := []string{
		"--memory-limit=" + opts.Get(OptMemoryMB).String(),
		"--threads=" + opts.Get(OptThreads).String(),
		"--conn-limit=" + opts.Get(OptMaxConnections).String(),
	}
	if opts.Get(OptEvictions).String() == "off" {
		out = append(out, "--disable-evictions")
	}
	params := map[string]string{}
	for _, k := range []string{OptMemoryMB, OptThreads, OptMaxConnections, OptEvictions} {
		params[k] = opts.Get(k).String()
	}
	return out, params, nil
}

// Binary returns the memcached binary: $SCALELAB_MEMCACHED, else
// memcached on PATH, else Debian's /usr/bin/memcached; the error wraps
// ErrNoServer and says how to install it.
func Binary() (string, error) { return server.FindBinary() }

// runAs returns the user memcached switches to when scalelab runs as root
// (memcached refuses to run as root without -u): SystemUser, else nobody.
// It returns "" when scalelab is not root.
func runAs() (string, error) {
	if os.Geteuid() != 0 {
		return "", nil
	}
	for _, name := range []string{SystemUser, "nobody"} {
		if _, err := user.Lookup(name); err == nil {
			return name, nil
		}
	}
	return "", fmt.Errorf("scalelab runs as root and memcached refuses to: it needs the %q system user (apt-get install -y memcached creates it) or nobody", SystemUser)
}

// Up starts the server detached on a free loopback port (TCP only, text
// protocol only) and returns once it answers.
func (Provisioner) Up(ctx context.Context, spec cluster.Spec, st *cluster.State) error {
	opts, params, err := flags(spec)
	if err != nil {
		return err
	}
	bin, err := Binary()
	if err != nil {
		return err
	}
	as, err := runAs()
	if err != nil {
		return err
	}
	if st.Params == nil {
		st.Params = map[string]string{}
	}
	for k, v := range params {
		st.Params[k] = v
	}
	cluster.RecordVersion(ctx, st, bin, "-V")
	st.Auth = "none: memcached runs without authentication (its ASCII authentication is experimental and gomemcache does not speak it); the server listens on 127.0.0.1 only (TCP, no UDP), so only this machine's users and processes reach it"
	node, err := server.Node(st)
	if err != nil {
		return err
	}
	if err := os.Mkdir(node.DataDir, 0o700); err != nil {
		return fmt.Errorf("memcached: %w", err)
	}
	node.Cmd = append([]string{bin, "--listen=" + node.Host, "--port=" + strconv.Itoa(node.Port), "--udp-port=0", "--protocol=ascii"}, opts...)
	if as != "" {
		node.Cmd = append(node.Cmd, "--user="+as)
		st.Params["os_user"] = as
	}
	return server.Start(ctx, st, node, func(addr string) string { return "memcached://" + addr })
}

// server is how the cluster package starts a memcached server, asks for
// its facts and judges its health.
var server = cluster.OneServer{
	Engine: Name, Binary: "memcached", BinaryEnv: BinaryEnv, Package: "memcached", NotFound: ErrNoServer,
	Answers: func(ctx context.Context, _ *cluster.State, addr string) error {
		_, err := stats(ctx, nil, addr)
		return err
	},
	Facts:    stats,
	FactKeys: []string{"version", "curr_connections", "curr_items", "bytes", "limit_maxbytes", "evictions"},
}

// stats asks the server at addr for its statistics (2 s at most).
func stats(ctx context.Context, _ *cluster.State, addr string) (map[string]string, error) {
	return Stats(ctx, addr, 2*time.Second, "")
}

// Status reports whether the server runs and, from its statistics, its
// version, connections, items and memory.
func (Provisioner) Status(ctx context.Context, st *cluster.State) ([]cluster.NodeStatus, error) {
	return server.Status(ctx, st)
}

// Health is green when the server answers within 2 s, red when its
// process runs but it does not answer, unreachable when its process is
// gone.
func (Provisioner) Health(ctx context.Context, st *cluster.State) (cluster.Health, error) {
	return server.Health(ctx, st)
}
