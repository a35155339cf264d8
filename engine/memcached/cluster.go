package memcached

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/scalelab/scalelab/cluster"
)

// Local servers: the binary and how to get it.
const (
	// BinaryEnv names a memcached binary to use instead of the one on
	// PATH.
	BinaryEnv = "SCALELAB_MEMCACHED"
	// InstallHint says how to get the server.
	InstallHint = "install it with `make setup` or `apt-get update && apt-get install -y memcached` (Debian's memcached), or point " + BinaryEnv + " at a memcached binary"
	// ParamVersion is the cluster param holding `memcached -V`.
	ParamVersion = "version"
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

var (
	_ cluster.Provisioner   = Provisioner{}
	_ cluster.HealthChecker = Provisioner{}
)

// Engine returns "memcached".
func (Provisioner) Engine() string { return Name }

// serverOption is a --opt of memcached clusters: the flag it sets, its
// default and its range.
type serverOption struct {
	flag     string
	def      int
	min, max int
	what     string
}

// serverOptions are the --opt keys memcached clusters take.
var serverOptions = map[string]serverOption{
	"memory_mb":       {flag: "--memory-limit", def: 1024, min: 8, max: 1 << 20, what: "memory for items in MB (memcached allocates it as items come)"},
	"threads":         {flag: "--threads", def: 4, min: 1, max: 256, what: "worker threads"},
	"max_connections": {flag: "--conn-limit", def: 1024, min: 16, max: 1 << 20, what: "simultaneous connections"},
}

// flags returns the server's command-line flags from spec's options (the
// address, port and user are added by Up).
func flags(spec cluster.Spec) ([]string, map[string]string, error) {
	if spec.Nodes > 1 || spec.Replicas > 0 {
		return nil, nil, errors.New("memcached clusters have one server (leave out --nodes and --replicas)")
	}
	if spec.Heap != "" || len(spec.Roles) > 0 {
		return nil, nil, errors.New("memcached clusters take no --heap or --roles (use --opt memory_mb=N)")
	}
	params := map[string]string{}
	var out []string
	names := make([]string, 0, len(serverOptions))
	for k := range serverOptions {
		names = append(names, k)
	}
	sort.Strings(names)
	for k := range spec.Options {
		if _, ok := serverOptions[k]; !ok && k != "exit_with_pid" && k != "evictions" {
			return nil, nil, fmt.Errorf("--opt %s: memcached clusters take %s and evictions=on|off", k, strings.Join(names, ", "))
		}
	}
	for _, k := range names {
		o := serverOptions[k]
		v := o.def
		if s, ok := spec.Options[k]; ok {
			n, err := strconv.Atoi(s)
			if err != nil || n < o.min || n > o.max {
				return nil, nil, fmt.Errorf("--opt %s=%s: %s, an integer in [%d, %d]", k, s, o.what, o.min, o.max)
			}
			v = n
		}
		out = append(out, o.flag+"="+strconv.Itoa(v))
		params[k] = strconv.Itoa(v)
	}
	switch ev := spec.Options["evictions"]; ev {
	case "", "on":
		params["evictions"] = "on"
	case "off":
		// a full server refuses writes (SERVER_ERROR, classed rejected)
		// instead of evicting items a store still needs
		out = append(out, "--disable-evictions")
		params["evictions"] = "off"
	default:
		return nil, nil, fmt.Errorf("--opt evictions=%s: on (memcached evicts the least recently used items when full) or off (it refuses writes)", ev)
	}
	return out, params, nil
}

// Binary returns the memcached binary: $SCALELAB_MEMCACHED, else
// memcached on PATH, else Debian's /usr/bin/memcached; the error wraps
// ErrNoServer and says how to install it.
func Binary() (string, error) {
	return cluster.FindBinary(ErrNoServer, BinaryEnv, "memcached", InstallHint, "/usr/bin")
}

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
	if out, err := exec.CommandContext(ctx, bin, "-V").Output(); err == nil {
		st.Params[ParamVersion] = strings.TrimSpace(string(out))
	}
	st.Auth = "none: memcached runs without authentication (its ASCII authentication is experimental and gomemcache does not speak it); the server listens on 127.0.0.1 only (TCP, no UDP), so only this machine's users and processes reach it"
	port, err := cluster.FreePort(cluster.Loopback)
	if err != nil {
		return fmt.Errorf("memcached: %w", err)
	}
	node := cluster.Node{Name: "node1", Role: "server", Host: cluster.Loopback, Port: port, Ports: map[string]int{"memcached": port},
		DataDir: filepath.Join(st.Dir, "node1"), LogFile: filepath.Join(st.Dir, "node1.log")}
	if err := os.Mkdir(node.DataDir, 0o700); err != nil {
		return fmt.Errorf("memcached: %w", err)
	}
	node.Cmd = append([]string{bin, "--listen=" + node.Host, "--port=" + strconv.Itoa(port), "--udp-port=0", "--protocol=ascii"}, opts...)
	if as != "" {
		node.Cmd = append(node.Cmd, "--user="+as)
		st.Params["os_user"] = as
	}
	pid, cg, err := st.StartNode(node.Name, node.Cmd, node.DataDir, node.LogFile, nil)
	if err != nil {
		return fmt.Errorf("memcached: %w", err)
	}
	node.PID, node.Cgroup = pid, cg
	st.Nodes = append(st.Nodes, node)
	if err := st.Save(); err != nil {
		return err
	}
	addr := node.ClientAddress()
	st.Target = "memcached://" + addr
	if err := cluster.WaitNodes(ctx, st, "memcached at "+addr, 50*time.Millisecond, func() bool { return version(ctx, addr) == nil }); err != nil {
		return fmt.Errorf("memcached: %w", err)
	}
	return nil
}

// version asks the server at addr for its statistics (2 s at most).
func version(ctx context.Context, addr string) error {
	_, err := Stats(ctx, addr, 2*time.Second, "")
	return err
}

// Status reports whether the server runs and, from its statistics, its
// version, connections, items and memory.
func (Provisioner) Status(ctx context.Context, st *cluster.State) ([]cluster.NodeStatus, error) {
	out := make([]cluster.NodeStatus, 0, len(st.Nodes))
	for _, n := range st.Nodes {
		ns := cluster.NodeStatus{Node: n, Alive: cluster.Alive(n.PID), Detail: map[string]string{}}
		if ns.Alive {
			stats, err := Stats(ctx, net.JoinHostPort(n.Host, strconv.Itoa(n.Port)), 2*time.Second, "")
			if err != nil {
				ns.Detail["error"] = err.Error()
			}
			for _, k := range []string{"version", "curr_connections", "curr_items", "bytes", "limit_maxbytes", "evictions"} {
				if v, ok := stats[k]; ok {
					ns.Detail[k] = v
				}
			}
		}
		out = append(out, ns)
	}
	return out, nil
}

// Health is green when the server answers within 2 s, red when its
// process runs but it does not answer, unreachable when its process is
// gone.
func (Provisioner) Health(ctx context.Context, st *cluster.State) (cluster.Health, error) {
	h := cluster.Health{Status: cluster.Unreachable, Of: len(st.Nodes), Detail: map[string]string{}}
	for _, n := range st.Nodes {
		switch {
		case !cluster.Alive(n.PID):
			h.Detail[n.Name] = "down"
		case version(ctx, net.JoinHostPort(n.Host, strconv.Itoa(n.Port))) != nil:
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
