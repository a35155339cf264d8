// Package cluster provisions local multi-process clusters of data stores on
// loopback: a state directory per cluster, process start (detached, so a
// cluster outlives the scalelab that started it), readiness waits, stop
// (TERM, grace period, KILL), generated secrets in 0600 files, and the
// registry of per-engine provisioners.
package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/scalelab/scalelab/cluster/cgroup"
	"github.com/scalelab/scalelab/cluster/netns"
	"github.com/scalelab/scalelab/registry"
	"github.com/scalelab/scalelab/setting"
)

// Spec is what `scalelab cluster up` asks for. Its options are checked
// against the provisioner's declarations (Options, Resolve): Nodes,
// Replicas, Heap and Roles spell the options nodes, replicas, heap and
// roles (zero: not given), Options holds the others (--opt key=value).
type Spec struct {
	Engine   string            // engine name
	Name     string            // cluster name, unique on this machine
	Nodes    int               // the nodes option (--nodes); 0: the provisioner's default
	Replicas int               // the replicas option (--replicas); 0: not given
	Heap     string            // the heap option (--heap); "": not given
	Roles    []string          // the roles option (--roles), one entry per node
	Options  map[string]string // the other options (--opt key=value)
	// Limits confine each node (--cpus, --memory, --cpuset) in its own
	// cgroup; zero: unconfined.
	Limits cgroup.Limits
	// Netns puts each node in its own network namespace on a bridge
	// (package netns); provisioners that support it implement Networked.
	Netns bool
}

// ClientAddress is the host:port the load generator uses for the node's
// client port.
func (n Node) ClientAddress() string {
	if n.Client != "" {
		return n.Client
	}
	return n.hostPort()
}

// hostPort is the node's own client address, Host:Port.
func (n Node) hostPort() string { return net.JoinHostPort(n.Host, strconv.Itoa(n.Port)) }

// Node is one process of a cluster.
type Node struct {
	Name    string         `json:"name"` // node1, node2, ...
	Role    string         `json:"role"` // primary, replica, cm, data, ...
	PID     int            `json:"pid"`
	Host    string         `json:"host"`  // loopback address it binds to
	Port    int            `json:"port"`  // the client port
	Ports   map[string]int `json:"ports"` // every port it listens on, by purpose
	DataDir string         `json:"data_dir"`
	LogFile string         `json:"log_file"`
	Cmd     []string       `json:"cmd,omitempty"`    // how to start it again (restart faults)
	Env     []string       `json:"env,omitempty"`    // extra environment for Cmd (no secrets)
	Cgroup  string         `json:"cgroup,omitempty"` // the node's cgroup when the cluster has limits
	// Client is the host:port the load generator uses when it is not
	// Host:Port (a link's proxy, cluster up --link); "" otherwise.
	Client string `json:"client,omitempty"`
	// StopSignal is the signal of the node's proper stop ("INT": a
	// PostgreSQL fast shutdown); "" means TERM.
	StopSignal string `json:"stop_signal,omitempty"`
}

// State is a cluster's on-disk description: <Root()>/<name>/cluster.json.
type State struct {
	Name       string            `json:"name"`
	Engine     string            `json:"engine"`
	Kind       string            `json:"kind,omitempty"` // the provisioner, when not named after the engine (ferretdb)
	Created    time.Time         `json:"created"`
	Dir        string            `json:"dir"`
	Target     string            `json:"target"` // what --target would be, without the password
	User       string            `json:"user,omitempty"`
	SecretFile string            `json:"secret_file,omitempty"` // 0600 file holding the password
	Auth       string            `json:"auth"`                  // how clients authenticate, or why they do not
	Nodes      []Node            `json:"nodes"`
	Params     map[string]string `json:"params,omitempty"` // spec and engine facts (version, heap, ...)
	// Limits confine every node (limits.go); LimitsCgroup says by which
	// cgroup version ("v1", "v2").
	Limits       *cgroup.Limits `json:"limits,omitempty"`
	LimitsCgroup string         `json:"limits_cgroup,omitempty"`
	// Net is the cluster's own network when it was started with --netns
	// (network.go): the bridge, each node's namespace and address.
	Net *netns.Topology `json:"net,omitempty"`
	// Links is the cluster's emulated links (cluster up --link), nil when
	// it has none.
	Links *Links `json:"links,omitempty"`
}

// NodeStatus is a node's live status for `scalelab cluster status`.
type NodeStatus struct {
	Node
	Alive  bool              `json:"alive"`
	Detail map[string]string `json:"detail,omitempty"` // e.g. replication lag, health
}

// Provisioner starts and inspects local clusters of one engine. Engines
// implement it in engine/<name>/cluster.go and Register it from init.
type Provisioner interface {
	// Engine is the engine name.
	Engine() string
	// Up starts the cluster described by spec into st (whose Dir exists),
	// filling Nodes, Target, SecretFile and Auth, and returns once the
	// cluster is healthy or ctx ends. On error the caller stops whatever
	// st.Nodes lists.
	Up(ctx context.Context, spec Spec, st *State) error
	// Status reports each node's live status.
	Status(ctx context.Context, st *State) ([]NodeStatus, error)
	// Options declares the options its clusters take (options.go): what
	// `cluster up ENGINE --help` and `scalelab list cluster ENGINE`
	// print and Resolve checks.
	Options() Options
}

// Downer is an optional capability: a provisioner that stops its nodes in
// a particular way (e.g. replicas before the primary). Without it, Down
// stops every node with TERM, a grace period, then KILL.
type Downer interface {
	Down(ctx context.Context, st *State) error
}

// Server is an optional capability of a Provisioner whose clusters an
// engine of another name uses (ferretdb clusters serve the mongodb
// engine).
type Server interface {
	Serves() string
}

// Tiered is an optional capability of a Provisioner whose clusters are a
// tier other than the store (the app tier): no engine uses them, a run
// reaches them through the tier.
type Tiered interface {
	Tier() string
}

// EngineOf returns the engine that uses p's clusters.
func EngineOf(p Provisioner) string {
	if s, ok := p.(Server); ok {
		return s.Serves()
	}
	return p.Engine()
}

// ForEngine returns the provisioner of an engine's local clusters: the one
// named after it, or the one that serves it (ferretdb for mongodb).
func ForEngine(engine string) (Provisioner, error) {
	p, err := Lookup(engine)
	if err == nil {
		return p, nil
	}
	for _, name := range provisioners.Names() {
		if q, _ := provisioners.Lookup(name); q != nil && EngineOf(q) == engine {
			return q, nil
		}
	}
	return nil, err
}

// Provisioners names the engines (and servers, such as ferretdb and app)
// that can start local clusters, sorted.
func Provisioners() []string { return provisioners.Names() }

// ProvisionerOf returns the provisioner that started st.
func ProvisionerOf(st *State) (Provisioner, error) {
	if st.Kind != "" {
		return Lookup(st.Kind)
	}
	return Lookup(st.Engine)
}

// ErrNotFound means no cluster of that name exists.
var ErrNotFound = errors.New("no such cluster")

var provisioners = registry.New[Provisioner]("cluster provisioner")

// Register makes a provisioner available; it panics on nil or a duplicate.
func Register(p Provisioner) {
	if p == nil {
		panic("cluster: Register of nil provisioner")
	}
	provisioners.Register(p.Engine(), p)
}

// Lookup returns the provisioner of an engine.
func Lookup(engine string) (Provisioner, error) {
	p, err := provisioners.Lookup(engine)
	if err != nil {
		names := provisioners.Names()
		msg := fmt.Sprintf("engine %q cannot start local clusters; engines that can: %s", engine, strings.Join(names, ", "))
		if n := setting.Nearest(engine, names); n != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", n)
		}
		return nil, errors.New(msg)
	}
	return p, nil
}

// Root is where cluster state lives: $SCALELAB_HOME/clusters, or
// ~/.scalelab/clusters.
func Root() string {
	if h := os.Getenv("SCALELAB_HOME"); h != "" {
		return filepath.Join(h, "clusters")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "scalelab", "clusters")
	}
	return filepath.Join(home, ".scalelab", "clusters")
}

var validName = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]{0,39}$`)

// CheckName validates a cluster name.
func CheckName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("cluster name %q: use 1-40 letters, digits, '-' or '_', starting with a letter", name)
	}
	return nil
}

// Dir returns the state directory of a cluster.
func Dir(name string) string { return filepath.Join(Root(), name) }

// Load reads a cluster's state.
func Load(name string) (*State, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(Dir(name), "cluster.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w %q (see `scalelab cluster list`)", ErrNotFound, name)
	}
	if err != nil {
		return nil, fmt.Errorf("read cluster %s: %w", name, err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("parse cluster %s state: %w", name, err)
	}
	return &st, nil
}

// Save writes a cluster's state atomically.
func (st *State) Save() error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode cluster state: %w", err)
	}
	path := filepath.Join(st.Dir, "cluster.json")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write cluster state: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write cluster state: %w", err)
	}
	return nil
}

// Password reads the cluster's password from its 0600 secret file.
func (st *State) Password() (string, error) {
	if st.SecretFile == "" {
		return "", nil
	}
	return ReadSecret(st.SecretFile)
}

// List returns the names of every cluster with state on this machine.
func List() ([]string, error) {
	entries, err := os.ReadDir(Root())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list clusters: %w", err)
	}
	var names []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(Root(), e.Name(), "cluster.json")); err == nil {
			names = append(names, e.Name())
		}
	}
	return names, nil
}
