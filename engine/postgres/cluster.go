package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/cluster/netns"
	"github.com/scalelab/scalelab/cluster/sysuser"
	"github.com/scalelab/scalelab/setting"
)

// Node roles in a local cluster's state.
const (
	RolePrimary = "primary"
	RoleReplica = "replica"
)

// Facts a local cluster records in cluster.State.Params.
const (
	ParamCAFile  = "ca_file"            // the CA of a cluster started with --opt tls=on
	ParamVersion = cluster.ParamVersion // postgres --version
	ParamOSUser  = "os_user"            // the system user the servers run as
	ParamBinDir  = "bin_dir"            // where the server binaries are
	ParamSetting = "setting."           // prefix of postgresql.conf settings scalelab wrote
)

// Local clusters: where the binaries are, the superuser and database
// scalelab creates.
const (
	DefaultBinDir = "/usr/lib/postgresql/15/bin"
	BinDirEnv     = "SCALELAB_PG_BIN" // overrides DefaultBinDir
	ClusterUser   = "scalelab"
	ClusterDB     = "scalelab"
	// SystemUser runs the servers when scalelab runs as root (PostgreSQL
	// refuses to run as root); Debian's postgresql package creates it.
	SystemUser = "postgres"
	loopback   = "127.0.0.1"
)

// InstallHint says how to get the server binaries.
const InstallHint = "install them with `make setup` or `apt-get update && apt-get install -y postgresql` (Debian's PostgreSQL 15), or point " + BinDirEnv + " at a PostgreSQL bin directory"

// ErrNoBinaries means the PostgreSQL server binaries are missing.
var ErrNoBinaries = errors.New("PostgreSQL server binaries not found")

func init() { cluster.Register(Provisioner{}) }

// Provisioner starts local PostgreSQL clusters: one primary and N streaming
// replicas on free loopback ports, password (SCRAM) authentication only.
type Provisioner struct{}

var _ cluster.Downer = Provisioner{}

// Engine returns "postgres".
func (Provisioner) Engine() string { return Name }

// baseSettings are written to every cluster's postgresql.conf. Replicas copy
// the primary's file with the base backup; port, cluster_name and the
// socket directory are given per node on the command line.
var baseSettings = [][2]string{
	{"listen_addresses", loopback},
	{"password_encryption", "scram-sha-256"},
	{"shared_buffers", "128MB"},
	{"max_connections", "200"},
	{"wal_level", "replica"},
	{"max_wal_senders", "10"},
	{"max_replication_slots", "10"},
	{"hot_standby", "on"},
	{"logging_collector", "off"},
	{"log_checkpoints", "off"},
	{"log_line_prefix", "%m [%p] %q%u@%d "},
}

// reserved are settings --opt may not change: they make the cluster
// reachable only on loopback, with passwords, and find its own files.
var reserved = map[string]bool{
	"listen_addresses": true, "port": true, "unix_socket_directories": true, "hba_file": true, "ident_file": true,
	"data_directory": true, "config_file": true, "password_encryption": true, "cluster_name": true,
	"ssl": true, "ssl_cert_file": true, "ssl_key_file": true, "ssl_ca_file": true,
}

var settingName = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)?$`)

// clusterConf is the parsed spec.
type clusterConf struct {
	replicas int
	tls      bool
	settings [][2]string // baseSettings then --opt ones
}

// OptTLS is the option that turns TLS on.
const OptTLS = "tls"

// MaxReplicas is the most replicas `cluster up` starts on one machine.
const MaxReplicas = 8

// Options declares what these clusters take: --replicas (--nodes, when
// given, is 1 + replicas), tls, and postgresql.conf settings.
func (Provisioner) Options() cluster.Options {
	reservedKeys := make([]string, 0, len(reserved))
	for k := range reserved {
		reservedKeys = append(reservedKeys, k)
	}
	return cluster.Options{
		Specs: []setting.Spec{
			cluster.NodesOption(1, 1+MaxReplicas, "servers: the primary and its replicas, 1 + --replicas (give --replicas instead)"),
			{Key: cluster.OptReplicas, Kind: setting.Int, Default: "0", Min: 0, Max: MaxReplicas, Description: "streaming replicas of the primary, each readable"},
			{Key: OptTLS, Kind: setting.Bool, Default: "false", Description: "TLS with a certificate of a CA the cluster generates (its file is the cluster param " + ParamCAFile + ")"},
		},
		Free: withServerParams(cluster.ConfigFree("postgresql.conf settings (fsync=off, shared_buffers=256MB)", settingName.MatchString, reservedKeys,
			"clusters listen on loopback only, with passwords")),
	}
}

func parseSpec(spec cluster.Spec) (*clusterConf, error) {
	opts, err := cluster.Resolve(Provisioner{}, spec)
	if err != nil {
		return nil, err
	}
	c := &clusterConf{replicas: int(opts.Get(cluster.OptReplicas).Int()), tls: opts.Get(OptTLS).Bool(),
		settings: append(append([][2]string{}, baseSettings...), opts.Free...)}
	if opts.Given(cluster.OptNodes) && int(opts.Get(cluster.OptNodes).Int()) != 1+c.replicas {
		return nil, fmt.Errorf("postgres clusters have one primary and --replicas N replicas; --nodes %d does not match (leave it out)", opts.Get(cluster.OptNodes).Int())
	}
	return c, nil
}

// BinDir returns the directory of the PostgreSQL server binaries, or an
// error wrapping ErrNoBinaries that says how to install them.
func BinDir() (string, error) {
	dir := DefaultBinDir
	if d := os.Getenv(BinDirEnv); d != "" {
		dir = d
	}
	for _, b := range []string{"initdb", "postgres", "pg_basebackup"} {
		if fi, err := os.Stat(filepath.Join(dir, b)); err != nil || fi.IsDir() {
			return "", fmt.Errorf("%w: no %s in %s; %s", ErrNoBinaries, b, dir, InstallHint)
		}
	}
	return dir, nil
}

// nodeSetup describes one server being set up.
type nodeSetup struct {
	name, role string
	host       string // the address it listens on: loopback, or its namespace's
	port       int
	dir, data  string
	log        string
}

func (n *nodeSetup) cmd(bin string) []string {
	cmd := []string{filepath.Join(bin, "postgres"), "-D", n.data, "-c", "port=" + strconv.Itoa(n.port), "-c", "cluster_name=" + n.name,
		"-c", "listen_addresses=" + n.host}
	sock := ""
	if len(filepath.Join(n.dir, ".s.PGSQL.65535")) < 100 { // sun_path limit
		sock = n.dir
	}
	return append(cmd, "-c", "unix_socket_directories="+sock)
}

// Netns reports that the nodes bind to the address cluster.NodeHost gives
// them, so --netns puts each in its own network namespace.
func (Provisioner) Netns() bool { return true }

// Up runs initdb for the primary, starts it, creates the scalelab database,
// then makes each replica with pg_basebackup (a replication slot each) and
// starts it, and returns once every replica streams.
func (Provisioner) Up(ctx context.Context, spec cluster.Spec, st *cluster.State) error {
	conf, err := parseSpec(spec)
	if err != nil {
		return err
	}
	bin, err := BinDir()
	if err != nil {
		return err
	}
	ou, err := sysuser.ForServer(SystemUser, "PostgreSQL", "apt-get install -y postgresql")
	if err != nil {
		return err
	}
	if err := ou.Reachable(ctx, st.Dir); err != nil {
		return err
	}
	recordServer(ctx, st, bin, ou)
	pw, err := setAuth(st, conf)
	if err != nil {
		return err
	}
	if conf.tls {
		if err := enableTLS(st, conf, ou); err != nil {
			return err
		}
	}
	for _, s := range conf.settings {
		st.Params[ParamSetting+s[0]] = s[1]
	}
	nodes, err := planNodes(st, conf.replicas)
	if err != nil {
		return err
	}
	primary := nodes[0]
	if err := startPrimary(ctx, ou, bin, primary, pw, conf, st); err != nil {
		return err
	}
	for _, n := range nodes[1:] {
		if err := startReplica(ctx, ou, bin, n, primary, pw, st); err != nil {
			return err
		}
	}
	if err := waitStreaming(ctx, st, primary, pw, conf.replicas); err != nil {
		return err
	}
	return setTarget(st)
}

// recordServer records the binaries' directory, the system user and the server's version in st.
func recordServer(ctx context.Context, st *cluster.State, bin string, ou *sysuser.User) {
	if st.Params == nil {
		st.Params = map[string]string{}
	}
	st.Params[ParamBinDir] = bin
	if ou != nil {
		st.Params[ParamOSUser] = ou.Name()
	}
	cluster.RecordVersion(ctx, st, filepath.Join(bin, "postgres"), "--version")
}

// setAuth makes the superuser's password file, records how clients authenticate and returns the password.
func setAuth(st *cluster.State, conf *clusterConf) (string, error) {
	st.User = ClusterUser
	st.SecretFile = filepath.Join(st.Dir, "password")
	pw, err := cluster.NewSecret(st.SecretFile)
	if err != nil {
		return "", err
	}
	st.Auth = fmt.Sprintf("scram-sha-256 password for user %s (loopback only; no trust entries)", ClusterUser)
	if st.Net != nil {
		if conf.tls {
			return "", fmt.Errorf("--netns with --opt tls=on: the server certificate names loopback only; use one or the other")
		}
		st.Auth = fmt.Sprintf("scram-sha-256 password for user %s (the cluster's own network %s and loopback only; no trust entries)", ClusterUser, st.Net.Subnet)
	}
	return pw, nil
}

// enableTLS writes the server's certificate and CA under st.Dir/tls and adds the ssl settings to conf.
func enableTLS(st *cluster.State, conf *clusterConf, ou *sysuser.User) error {
	tlsDir := filepath.Join(st.Dir, "tls")
	if err := ou.Mkdir(tlsDir); err != nil {
		return err
	}
	ca, err := writeServerTLS(tlsDir, ou)
	if err != nil {
		return err
	}
	st.Params[ParamCAFile] = ca
	conf.settings = append(conf.settings, [2]string{"ssl", "on"},
		[2]string{"ssl_cert_file", filepath.Join(tlsDir, "server.crt")}, [2]string{"ssl_key_file", filepath.Join(tlsDir, "server.key")})
	st.Auth += "; TLS on (CA in " + ca + ")"
	return nil
}

// planNodes picks each node's name, role, address, port and directories (the primary first).
func planNodes(st *cluster.State, replicas int) ([]*nodeSetup, error) {
	nodes := make([]*nodeSetup, 1+replicas)
	for i := range nodes {
		port, err := cluster.FreePort(loopback)
		if err != nil {
			return nil, err
		}
		n := &nodeSetup{name: fmt.Sprintf("node%d", i+1), role: RoleReplica, port: port}
		if n.host, err = st.NodeHost(n.name); err != nil {
			return nil, err
		}
		if i == 0 {
			n.role = RolePrimary
		}
		n.dir = filepath.Join(st.Dir, n.name)
		n.data = filepath.Join(n.dir, "data")
		n.log = filepath.Join(st.Dir, n.name+".log")
		nodes[i] = n
	}
	return nodes, nil
}

// startPrimary runs initdb for the primary, starts it and creates the scalelab database.
func startPrimary(ctx context.Context, ou *sysuser.User, bin string, primary *nodeSetup, pw string, conf *clusterConf, st *cluster.State) error {
	if err := initPrimary(ctx, ou, bin, primary, pw, conf, st.Net); err != nil {
		return err
	}
	if err := startNode(ctx, ou, bin, primary, pw, st); err != nil {
		return err
	}
	if err := withConn(ctx, primary.host, primary.port, pw, "postgres", func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, "CREATE DATABASE "+ClusterDB)
		return err
	}); err != nil {
		return fmt.Errorf("create database %s: %w", ClusterDB, err)
	}
	return nil
}

// startReplica makes replica n with pg_basebackup (a replication slot of its own) and starts it.
func startReplica(ctx context.Context, ou *sysuser.User, bin string, n, primary *nodeSetup, pw string, st *cluster.State) error {
	if err := ou.Mkdir(n.dir); err != nil {
		return err
	}
	// the replica streams from the primary through its link's proxy
	// when the cluster's links delay (-R writes that address)
	phost, pport, err := st.PeerAddr(n.name, primary.name, primary.host, primary.port)
	if err != nil {
		return fmt.Errorf("replica %s: %w", n.name, err)
	}
	if err := ou.Run(ctx, n.dir, n.log, []string{PasswordEnv + "=" + pw, "PGSSLMODE=prefer"},
		filepath.Join(bin, "pg_basebackup"), "-h", phost, "-p", strconv.Itoa(pport), "-U", ClusterUser,
		"-D", n.data, "-X", "stream", "-R", "-C", "-S", n.name, "-c", "fast", "-N"); err != nil {
		return fmt.Errorf("replica %s: %w", n.name, err)
	}
	return startNode(ctx, ou, bin, n, pw, st)
}

// waitStreaming waits until the primary sees every replica streaming, failing early when a node dies.
func waitStreaming(ctx context.Context, st *cluster.State, primary *nodeSetup, pw string, replicas int) error {
	if replicas <= 0 {
		return nil
	}
	return cluster.WaitFor(ctx, fmt.Sprintf("%d replicas to stream", replicas), 100*time.Millisecond, func() bool {
		n := 0
		_ = withConn(ctx, primary.host, primary.port, pw, ClusterDB, func(c *pgx.Conn) error {
			return c.QueryRow(ctx, "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'").Scan(&n)
		})
		return n == replicas
	}, func() bool { return anyDead(st) })
}

// setTarget sets the nodes' client addresses (theirs, or their links' proxies) and the primary's URL as target.
func setTarget(st *cluster.State) error {
	for i := range st.Nodes {
		if err := st.SetClient(&st.Nodes[i]); err != nil {
			return err
		}
	}
	st.Target = (&url.URL{Scheme: "postgres", User: url.User(ClusterUser), Host: st.Nodes[0].ClientAddress(), Path: "/" + ClusterDB}).String()
	return nil
}

// initPrimary runs initdb and writes pg_hba.conf and the settings.
func initPrimary(ctx context.Context, ou *sysuser.User, bin string, n *nodeSetup, pw string, conf *clusterConf, nw *netns.Topology) error {
	if err := ou.Mkdir(n.dir); err != nil {
		return err
	}
	pwfile := filepath.Join(n.dir, "initdb.pw")
	if err := os.WriteFile(pwfile, []byte(pw+"\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(pwfile)
	if err := ou.Own(pwfile); err != nil {
		return err
	}
	if err := ou.Run(ctx, n.dir, n.log, []string{"LC_ALL=C"}, filepath.Join(bin, "initdb"), "-D", n.data, "-U", ClusterUser,
		"--pwfile="+pwfile, "--auth=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return err
	}
	hba := "# scalelab: passwords (SCRAM) only, loopback only; no trust entries\n" +
		"local   all           all                  scram-sha-256\n" +
		"host    all           all    127.0.0.1/32  scram-sha-256\n" +
		"host    replication   all    127.0.0.1/32  scram-sha-256\n"
	if nw != nil {
		// --netns: the cluster's own bridge network, nothing beyond it
		hba += fmt.Sprintf("host    all           all    %s  scram-sha-256\nhost    replication   all    %s  scram-sha-256\n", nw.Subnet, nw.Subnet)
	}
	if err := os.WriteFile(filepath.Join(n.data, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("\n# written by scalelab cluster up\n")
	for _, s := range conf.settings {
		fmt.Fprintf(&b, "%s = '%s'\n", s[0], strings.ReplaceAll(s[1], "'", "''"))
	}
	f, err := os.OpenFile(filepath.Join(n.data, "postgresql.conf"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// startNode starts a server detached, records it in st, and waits until it
// accepts connections (a replica: in recovery).
func startNode(ctx context.Context, ou *sysuser.User, bin string, n *nodeSetup, pw string, st *cluster.State) error {
	node, err := st.Launch(cluster.Node{Name: n.name, Role: n.role, Host: n.host, Port: n.port, Ports: map[string]int{"sql": n.port},
		DataDir: n.data, LogFile: n.log, Cmd: ou.Wrap(n.cmd(bin)), StopSignal: "INT"}, n.dir)
	if err != nil {
		return err
	}
	if err := st.Save(); err != nil {
		return err
	}
	return cluster.WaitFor(ctx, n.name+" to accept connections", 100*time.Millisecond, func() bool {
		err := withConn(ctx, n.host, n.port, pw, "postgres", func(c *pgx.Conn) error {
			var rec bool
			if err := c.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&rec); err != nil {
				return err
			}
			if rec != (n.role == RoleReplica) {
				return fmt.Errorf("recovery %t", rec)
			}
			return nil
		})
		return err == nil
	}, func() bool { return !cluster.Alive(node.PID) })
}

func anyDead(st *cluster.State) bool {
	for _, n := range st.Nodes {
		if !cluster.Alive(n.PID) {
			return true
		}
	}
	return false
}

// withConn connects to a local node as the cluster's superuser (plain TCP on
// loopback), runs f and closes the connection.
func withConn(ctx context.Context, host string, port int, pw, db string, f func(*pgx.Conn) error) error {
	cfg, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable connect_timeout=5", host, port, ClusterUser, db))
	if err != nil {
		return err
	}
	cfg.Password = pw
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	return f(c)
}

// Status reports each node: alive, and from the primary's
// pg_stat_replication each replica's state and lag (bytes of WAL not yet
// replayed, and replay_lag).
func (Provisioner) Status(ctx context.Context, st *cluster.State) ([]cluster.NodeStatus, error) {
	pw, err := st.Password()
	if err != nil {
		return nil, err
	}
	out := make([]cluster.NodeStatus, len(st.Nodes))
	byName := map[string]*cluster.NodeStatus{}
	for i, n := range st.Nodes {
		out[i] = cluster.NodeStatus{Node: n, Alive: cluster.Alive(n.PID), Detail: map[string]string{}}
		byName[n.Name] = &out[i]
	}
	for i, n := range st.Nodes {
		ns := &out[i]
		if !ns.Alive {
			continue
		}
		err := withConn(ctx, n.Host, n.Port, pw, ClusterDB, func(c *pgx.Conn) error {
			var rec bool
			if err := c.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&rec); err != nil {
				return err
			}
			ns.Detail["recovery"] = strconv.FormatBool(rec)
			if rec {
				return nil
			}
			rows, err := c.Query(ctx, `SELECT application_name, state,
				pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint,
				(EXTRACT(epoch FROM replay_lag) * 1000)::float8
				FROM pg_stat_replication`)
			if err != nil {
				return err
			}
			defer rows.Close()
			streaming := 0
			for rows.Next() {
				var app, state string
				var lagBytes *int64
				var lagMs *float64
				if err := rows.Scan(&app, &state, &lagBytes, &lagMs); err != nil {
					return err
				}
				if state == "streaming" {
					streaming++
				}
				if r := byName[app]; r != nil {
					r.Detail["state"] = state
					// NULL until the replica has replayed something, and
					// replay_lag is NULL again once it has caught up.
					r.Detail["lag_bytes"] = "unknown"
					if lagBytes != nil {
						r.Detail["lag_bytes"] = strconv.FormatInt(*lagBytes, 10)
					}
					r.Detail["replay_lag_ms"] = "0"
					if lagMs != nil {
						r.Detail["replay_lag_ms"] = strconv.FormatFloat(*lagMs, 'f', 1, 64)
					}
				}
			}
			ns.Detail["streaming_replicas"] = strconv.Itoa(streaming)
			return rows.Err()
		})
		if err != nil {
			ns.Detail["error"] = Classify(ctx, err).Error()
		}
	}
	for i := range out {
		if out[i].Role == RoleReplica && out[i].Alive && out[i].Detail["state"] == "" {
			out[i].Detail["state"] = "not streaming"
		}
	}
	return out, nil
}

// downGrace is how long Down waits for a node's fast shutdown.
const downGrace = 30 * time.Second

// Down stops the replicas, then the primary, each with a fast shutdown
// (SIGINT: disconnect clients, checkpoint, exit), waiting for each. Nodes
// still alive after that are left to the caller's TERM/KILL.
func (Provisioner) Down(ctx context.Context, st *cluster.State) error {
	for i := len(st.Nodes) - 1; i >= 0; i-- {
		pid := st.Nodes[i].PID
		if !cluster.Alive(pid) {
			continue
		}
		_ = syscall.Kill(pid, syscall.SIGINT)
		deadline := time.Now().Add(downGrace)
		for cluster.Alive(pid) && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

var _ cluster.HealthChecker = Provisioner{}

// Health asks the primary (2 s timeouts, so a hung node does not hold the
// probe) which replicas stream: green when every running replica streams,
// yellow when one does not, red when the primary does not answer. Nodes
// counts the primary and the streaming replicas.
func (Provisioner) Health(ctx context.Context, st *cluster.State) (cluster.Health, error) {
	h := cluster.Health{Status: cluster.Red, Of: len(st.Nodes), Detail: map[string]string{}}
	pw, err := st.Password()
	if err != nil {
		return h, err
	}
	var primary *cluster.Node
	for i := range st.Nodes {
		if st.Nodes[i].Role == RolePrimary {
			primary = &st.Nodes[i]
		}
	}
	if primary == nil || !cluster.Alive(primary.PID) {
		h.Detail["primary"] = "down"
		return h, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	streaming := map[string]bool{}
	err = withConn(ctx, primary.Host, primary.Port, pw, ClusterDB, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, "SELECT application_name FROM pg_stat_replication WHERE state = 'streaming'")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var app string
			if err := rows.Scan(&app); err != nil {
				return err
			}
			streaming[app] = true
		}
		return rows.Err()
	})
	if err != nil {
		h.Detail["primary"] = "not answering"
		return h, nil
	}
	h.Status, h.Nodes = cluster.Green, 1
	for _, n := range st.Nodes {
		if n.Role != RoleReplica {
			continue
		}
		switch {
		case streaming[n.Name]:
			h.Nodes++
			h.Detail[n.Name] = "streaming"
		case cluster.Alive(n.PID):
			h.Status = cluster.Yellow
			h.Detail[n.Name] = "not streaming"
		default:
			h.Detail[n.Name] = "down"
		}
	}
	return h, nil
}
