package cassandra

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/cluster/jvm"
	"github.com/scalelab/scalelab/setting"
	"github.com/scalelab/scalelab/wait"
)

func init() { cluster.Register(&Provisioner{}) }

// Provisioner starts local rings: one JVM per node (so that a node can be
// stopped or restarted alone), node i on loopback address 127.0.0.i with
// the ring's storage (gossip) and CQL ports, which scalelab picks free on
// every address so that several rings can run at once. Node 1 is the seed;
// the others join it without bootstrap streaming (the ring is empty).
// Authentication is on (PasswordAuthenticator): scalelab creates a
// superuser role "scalelab" with a generated password kept in a 0600 file,
// replicates system_auth to every node, and takes the default
// cassandra/cassandra login away (random password, no login, no
// superuser).
//
// Its options (Options) are the nodes, the JVM's (heap, jvm_options,
// exit_with_pid) and num_tokens.
type Provisioner struct{}

var _ cluster.Provisioner = (*Provisioner)(nil)

// Engine returns "cassandra".
func (*Provisioner) Engine() string { return Name }

// DefaultHeap is a node's JVM heap when --heap is not given.
const DefaultHeap = "512m"

// OptNumTokens is the option of the virtual nodes per node.
const OptNumTokens = "num_tokens"

// Options declares what rings take: --nodes (no replicas or roles: every
// node holds data), the JVM's options and num_tokens.
func (*Provisioner) Options() cluster.Options {
	return cluster.Options{Specs: append([]setting.Spec{
		cluster.NodesOption(1, MaxNodes, "nodes of the ring, node i on 127.0.0.i, every one holding data (the keyspace's replication is --set "+KeyReplication+"=N)"),
		{Key: OptNumTokens, Kind: setting.Int, Default: "8", Min: 1, Max: 256, Description: "virtual nodes (tokens) per node"},
	}, jvm.NodeOptionSpecs(DefaultHeap)...)}
}

// MaxNodes is the largest ring `cluster up` starts (one loopback address
// per node).
const MaxNodes = 16

// User is the superuser role scalelab creates on its rings.
const User = "scalelab"

// AuthNote is the cluster's Auth text.
const AuthNote = "PasswordAuthenticator: role scalelab (superuser) with the generated password in the secret file; " +
	"the default cassandra role can no longer log in; system_auth is replicated to every node"

// nodeAddr is node i's (0-based) loopback address.
func nodeAddr(i int) string { return fmt.Sprintf("127.0.0.%d", i+1) }

// freeOnAll returns a port free on every host right now, not in avoid.
func freeOnAll(hosts []string, avoid map[int]bool) (int, error) {
	for range 50 {
		p, err := cluster.FreePort(hosts[0])
		if err != nil {
			return 0, err
		}
		if avoid[p] {
			continue
		}
		ok := true
		for _, h := range hosts[1:] {
			l, err := net.Listen("tcp", net.JoinHostPort(h, strconv.Itoa(p)))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			avoid[p] = true
			return p, nil
		}
	}
	return 0, fmt.Errorf("no port free on all of %s", strings.Join(hosts, ", "))
}

// Netns reports that the nodes bind to the address cluster.NodeHost gives
// them, so --netns puts each in its own network namespace.
func (p *Provisioner) Netns() bool { return true }

// Up starts the nodes (the seed first), waits until every node is up and
// normal, then sets authentication up.
func (p *Provisioner) Up(ctx context.Context, spec cluster.Spec, st *cluster.State) error {
	r, err := p.plan(spec, st)
	if err != nil {
		return err
	}
	st.Auth = AuthNote
	st.User = User
	// The seed first: the other nodes fail when they find no seed to
	// gossip with. They can join at once when it listens.
	if err := r.startSeed(st); err != nil {
		return err
	}
	if err := r.startOthers(ctx, st); err != nil {
		return err
	}
	if err := cluster.WaitNodesState(ctx, st, fmt.Sprintf("%d nodes up and normal", r.nodes), 500*time.Millisecond, func() (bool, string) { return ringReady(ctx, st, r.nodes) }); err != nil {
		return err
	}
	v, err := setupAuth(ctx, st, r.nodes)
	if err != nil {
		return err
	}
	st.Params[cluster.ParamVersion] = v
	st.Params["system_auth_replication"] = strconv.Itoa(r.nodes)
	return st.Save()
}

// ring is what starting a ring's nodes takes: the options, the JVM, the
// nodes' addresses, the ring's ports, and the targets of the nodes started.
type ring struct {
	nodes, numTokens        int
	no                      jvm.NodeOptions
	java                    string
	javaVersion             int
	cp                      string
	hosts                   []string // node i's address
	storagePort, nativePort int
	targets                 []string // the load generator's address of each node started
}

// plan resolves spec, finds the JDK and the classpath, and picks the nodes' addresses and the ring's ports.
func (p *Provisioner) plan(spec cluster.Spec, st *cluster.State) (*ring, error) {
	opts, err := cluster.Resolve(p, spec)
	if err != nil {
		return nil, err
	}
	r := &ring{nodes: int(opts.Get(cluster.OptNodes).Int()), numTokens: int(opts.Get(OptNumTokens).Int()), no: jvm.NodeOptionsOf(opts)}
	if r.java, r.javaVersion, err = JDK(); err != nil {
		return nil, err
	}
	if r.cp, err = Classpath(); err != nil {
		return nil, err
	}
	hosts, probe, err := nodeHosts(st, r.nodes)
	if err != nil {
		return nil, err
	}
	r.hosts = hosts
	used := map[int]bool{}
	if r.storagePort, err = freeOnAll(probe, used); err != nil {
		return nil, err
	}
	if r.nativePort, err = freeOnAll(probe, used); err != nil {
		return nil, err
	}
	return r, nil
}

// nodeHosts returns the address each node binds to and the address to probe for its free ports.
func nodeHosts(st *cluster.State, nodes int) (hosts, probe []string, err error) {
	// Node i binds to 127.0.0.i, or with --netns to its own namespace's
	// address (where every port is free: the probe stays on loopback).
	hosts = make([]string, nodes)
	probe = make([]string, nodes)
	for i := range hosts {
		hosts[i], probe[i] = nodeAddr(i), nodeAddr(i)
		if st.Net != nil {
			if hosts[i], err = st.NodeHost(fmt.Sprintf("node%d", i+1)); err != nil {
				return nil, nil, err
			}
			probe[i] = cluster.Loopback
		}
	}
	return hosts, probe, nil
}

// startSeed starts node 1, the seed, and saves st with its target and the ring's params.
func (r *ring) startSeed(st *cluster.State) error {
	if err := r.startNode(st, 0); err != nil {
		return err
	}
	st.Target = strings.Join(r.targets, ",")
	r.no.Record(st.Params, r.java, r.javaVersion)
	st.Params["num_tokens"] = strconv.Itoa(r.numTokens)
	return st.Save()
}

// startOthers starts the nodes after the seed once its gossip port listens, and saves st with their targets.
func (r *ring) startOthers(ctx context.Context, st *cluster.State) error {
	if r.nodes <= 1 {
		return nil
	}
	seed := net.JoinHostPort(r.hosts[0], strconv.Itoa(r.storagePort))
	err := waitUntil(ctx, st, "the seed node's gossip port", func() bool { return cluster.Listening(seed) })
	if err != nil {
		return err
	}
	for i := 1; i < r.nodes; i++ {
		if err := r.startNode(st, i); err != nil {
			return err
		}
	}
	st.Target = strings.Join(r.targets, ",")
	return st.Save()
}

// startNode writes node i's home and starts it, adding it to st and its address to the targets.
func (r *ring) startNode(st *cluster.State, i int) error {
	name := fmt.Sprintf("node%d", i+1)
	home := filepath.Join(st.Dir, name)
	if err := r.writeHome(st, home, i); err != nil {
		return fmt.Errorf("node %s: %w", name, err)
	}
	// the load generator's address: the node's, or its link's proxy
	// (the engine translates the ring's addresses to these)
	node, err := st.AddNode(cluster.Node{
		Name: name, Role: "data", Host: r.hosts[i], Port: r.nativePort,
		Ports:   map[string]int{"cql": r.nativePort, "storage": r.storagePort},
		DataDir: home, LogFile: filepath.Join(st.Dir, name+".log"), Cmd: r.command(home),
	}, home)
	if err != nil {
		return fmt.Errorf("node %s: %w", name, err)
	}
	r.targets = append(r.targets, node.ClientAddress())
	return nil
}

// writeHome makes node i's directories under home and writes its cassandra.yaml and logback.xml.
func (r *ring) writeHome(st *cluster.State, home string, i int) error {
	for _, d := range []string{"data", "commitlog", "saved_caches", "hints", "cdc_raw", "tmp", "logs"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			return err
		}
	}
	yaml := nodeYAML(st.Name, home, r.hosts[i], r.hosts[0], r.storagePort, r.nativePort, r.numTokens)
	if err := os.WriteFile(filepath.Join(home, "cassandra.yaml"), []byte(yaml), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(home, "logback.xml"), []byte(logbackXML), 0o600)
}

// command is the JVM command line of the node whose home is home.
func (r *ring) command(home string) []string {
	cmd := r.no.Command(r.java, jvmFlags, startFlags)
	cmd = append(cmd,
		"-Dcassandra.config=file://"+filepath.Join(home, "cassandra.yaml"),
		"-Dcassandra.storagedir="+home,
		"-Dcassandra.logdir="+filepath.Join(home, "logs"),
		"-Dlogback.configurationFile="+filepath.Join(home, "logback.xml"),
		"-Djava.io.tmpdir="+filepath.Join(home, "tmp"))
	if r.no.ExitWithPID > 0 {
		cmd = append(cmd, "-Dscalelab.exit-with-pid="+strconv.Itoa(r.no.ExitWithPID))
	}
	return append(cmd, "-cp", r.cp, MainClass)
}

// waitUntil polls ready every 500 ms, failing early with the log's last
// lines when a node process exits.
func waitUntil(ctx context.Context, st *cluster.State, what string, ready func() bool) error {
	return cluster.WaitNodes(ctx, st, what, 500*time.Millisecond, ready)
}

// nodeSession opens a session on one node only, as user (no
// authentication when user is "").
func nodeSession(n cluster.Node, user, password string, timeout time.Duration) (*gocql.Session, error) {
	cc := gocql.NewCluster(net.JoinHostPort(n.Host, strconv.Itoa(n.Port)))
	cc.DisableInitialHostLookup = true
	cc.HostFilter = gocql.WhiteListHostFilter(n.Host)
	cc.Timeout, cc.ConnectTimeout = timeout, timeout
	cc.NumConns = 1
	cc.Logger = gocql.NewLogger(gocql.LogLevelNone)
	cc.Events.DisableNodeStatusEvents, cc.Events.DisableTopologyEvents, cc.Events.DisableSchemaEvents = true, true, true
	if user != "" {
		cc.Authenticator = gocql.PasswordAuthenticator{Username: user, Password: password}
	}
	return cc.CreateSession()
}

// gossipState is one endpoint's state as a node's gossip knows it.
type gossipState struct {
	Status string // NORMAL, BOOT, LEAVING, ... (STATUS_WITH_PORT without tokens)
	Load   string // bytes on disk, as gossip spreads it
}

// gossip reads system_views.gossip_info through s: endpoint address ->
// state.
func gossip(ctx context.Context, s *gocql.Session) (map[string]gossipState, error) {
	out := map[string]gossipState{}
	iter := s.Query("SELECT address, status_with_port, load FROM system_views.gossip_info").Consistency(gocql.One).IterContext(ctx)
	var (
		addr         net.IP
		status, load string
	)
	for iter.Scan(&addr, &status, &load) {
		st, _, _ := strings.Cut(status, ",")
		out[addr.String()] = gossipState{Status: st, Load: load}
		status, load = "", ""
	}
	return out, iter.Close()
}

// ringGossip returns the gossip state of the ring from the first running
// node that answers within timeout, or nil when none does.
func ringGossip(ctx context.Context, st *cluster.State, password string, timeout time.Duration) map[string]gossipState {
	for _, n := range st.Nodes {
		if !cluster.Alive(n.PID) {
			continue
		}
		s, err := nodeSession(n, st.User, password, timeout)
		if err != nil {
			continue
		}
		g, err := gossip(ctx, s)
		s.Close()
		if err == nil {
			return g
		}
	}
	return nil
}

// ringReady reports whether every node answers CQL (with the default
// superuser while the ring is new) and knows every node as NORMAL.
func ringReady(ctx context.Context, st *cluster.State, nodes int) (bool, string) {
	if len(st.Nodes) != nodes {
		return false, fmt.Sprintf("%d of %d nodes started", len(st.Nodes), nodes)
	}
	for _, n := range st.Nodes {
		if !cluster.Listening(net.JoinHostPort(n.Host, strconv.Itoa(n.Port))) {
			return false, n.Name + " not yet listening for CQL"
		}
	}
	for _, n := range st.Nodes {
		s, err := nodeSession(n, "cassandra", "cassandra", 5*time.Second)
		if err != nil {
			return false, n.Name + " refuses a session"
		}
		g, err := gossip(ctx, s)
		s.Close()
		if err != nil {
			return false, n.Name + " does not answer about gossip"
		}
		normal := 0
		for _, m := range st.Nodes {
			if g[m.Host].Status == "NORMAL" {
				normal++
			}
		}
		if normal != nodes {
			return false, fmt.Sprintf("%s sees %d of %d nodes normal", n.Name, normal, nodes)
		}
	}
	return true, ""
}

// authWait bounds each statement of setupAuth, retried while a node of a
// ring that just formed does not yet see the others as up.
const authWait = 2 * time.Minute

// setupAuth replicates system_auth to every node, creates the scalelab
// superuser with a generated password (0600 secret file) and takes the
// default superuser's login away. It returns the server version.
func setupAuth(ctx context.Context, st *cluster.State, nodes int) (string, error) {
	secret := filepath.Join(st.Dir, "password")
	password, err := cluster.NewSecret(secret)
	if err != nil {
		return "", err
	}
	st.SecretFile = secret
	// Statements are retried briefly: right after the ring forms, a node
	// may not yet see another as up (unavailable at QUORUM).
	exec := func(s *gocql.Session, what, q string) error {
		f := wait.For{What: "the ring to " + what + " on every node", Bound: authWait, Every: time.Second,
			Hint: "a node may not see the others as up yet"}
		return f.Poll(ctx, func(ctx context.Context) (bool, string, error) {
			if err := s.Query(q).Consistency(gocql.All).ExecContext(ctx); err != nil {
				return false, "not yet", wait.Retry(err)
			}
			return true, "", nil
		})
	}
	s, err := nodeSession(st.Nodes[0], "cassandra", "cassandra", 10*time.Second)
	if err != nil {
		return "", fmt.Errorf("log in with the default superuser: %w", err)
	}
	defer s.Close()
	var dc, version string
	if err := s.Query("SELECT data_center, release_version FROM system.local").ScanContext(ctx, &dc, &version); err != nil {
		return "", fmt.Errorf("read system.local: %w", err)
	}
	if err := exec(s, "replicate system_auth", fmt.Sprintf("ALTER KEYSPACE system_auth WITH replication = {'class': 'NetworkTopologyStrategy', '%s': %d}", dc, nodes)); err != nil {
		return "", err
	}
	// The password is in this statement only: it is never logged or
	// quoted in an error.
	if err := exec(s, "create role "+User, fmt.Sprintf("CREATE ROLE IF NOT EXISTS %s WITH PASSWORD = '%s' AND SUPERUSER = true AND LOGIN = true", User, password)); err != nil {
		return "", err
	}
	s2, err := nodeSession(st.Nodes[0], User, password, 10*time.Second)
	if err != nil {
		return "", fmt.Errorf("log in as %s: %w", User, err)
	}
	defer s2.Close()
	other, err := cluster.NewSecret(filepath.Join(st.Dir, "tmp-password"))
	if err != nil {
		return "", err
	}
	_ = os.Remove(filepath.Join(st.Dir, "tmp-password"))
	if err := exec(s2, "disable the default cassandra role", fmt.Sprintf("ALTER ROLE cassandra WITH PASSWORD = '%s' AND SUPERUSER = false AND LOGIN = false", other)); err != nil {
		return "", err
	}
	return version, nil
}

// Status reports each node: alive, its CQL port answering, and from the
// first node that answers its gossip state (NORMAL, BOOT, LEAVING ...)
// and load; state is U/D (process alive and CQL answering, or not) and
// N/J/L/M as nodetool prints them.
func (p *Provisioner) Status(ctx context.Context, st *cluster.State) ([]cluster.NodeStatus, error) {
	password, err := st.Password()
	if err != nil {
		return nil, err
	}
	g := ringGossip(ctx, st, password, 5*time.Second)
	var out []cluster.NodeStatus
	for _, n := range st.Nodes {
		alive := cluster.Alive(n.PID)
		up := alive && cluster.Listening(net.JoinHostPort(n.Host, strconv.Itoa(n.Port)))
		ns := cluster.NodeStatus{Node: n, Alive: alive, Detail: map[string]string{
			"storage_port": strconv.Itoa(n.Ports["storage"]),
		}}
		gs, known := g[n.Host]
		state := "D"
		if up {
			state = "U"
		}
		switch gs.Status {
		case "NORMAL", "shutdown":
			state += "N" // a drained node announces shutdown; nodetool shows it DN
		case "BOOT", "BOOT_REPLACE":
			state += "J"
		case "LEAVING", "LEFT":
			state += "L"
		case "MOVING":
			state += "M"
		default:
			state += "?"
		}
		ns.Detail["state"] = state
		if known {
			ns.Detail["gossip"] = gs.Status
			if f, err := strconv.ParseFloat(gs.Load, 64); err == nil {
				ns.Detail["load"] = humanBytes(f)
			}
		} else if g == nil {
			ns.Detail["gossip"] = "no node answered"
		}
		out = append(out, ns)
	}
	return out, nil
}

// humanBytes formats a byte count as nodetool does (KiB, MiB, GiB).
func humanBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	return strconv.FormatFloat(b, 'f', 2, 64) + " " + units[i]
}

var _ cluster.HealthChecker = (*Provisioner)(nil)

// Health reads gossip from the first node that answers (3 s timeouts) and
// counts the nodes that are UN as Status defines it (process alive, CQL
// port accepting, gossip NORMAL): green when every running node is UN,
// yellow when a running node is not (joining, leaving, CQL not yet open),
// unreachable when no node answers. Cassandra does not re-replicate a dead
// node's data, so a ring that lost a node is green with fewer nodes while
// the others serve (and hold hints for) its ranges. A node hung by SIGSTOP
// still accepts TCP connections and counts as up here.
func (p *Provisioner) Health(ctx context.Context, st *cluster.State) (cluster.Health, error) {
	h := cluster.Health{Status: cluster.Unreachable, Of: len(st.Nodes)}
	password, err := st.Password()
	if err != nil {
		return h, err
	}
	g := ringGossip(ctx, st, password, 3*time.Second)
	if g == nil {
		return h, nil
	}
	h.Status, h.Detail = cluster.Green, map[string]string{}
	for _, n := range st.Nodes {
		alive := cluster.Alive(n.PID)
		up := alive && cluster.Listening(net.JoinHostPort(n.Host, strconv.Itoa(n.Port)))
		switch {
		case up && g[n.Host].Status == "NORMAL":
			h.Nodes++
		case alive:
			h.Status = cluster.Yellow
			h.Detail[n.Name] = "not UN (gossip " + g[n.Host].Status + ")"
		default:
			h.Detail[n.Name] = "DN"
		}
	}
	return h, nil
}
