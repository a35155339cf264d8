// Package apptier starts the app tier's local clusters: N `scalelab serve`
// processes of a web scenario's backend on a store (a store cluster, or a
// SQLite file of the app cluster's own), behind an HAProxy load balancer,
// everything on loopback. It reads the balancer's view of its servers
// (status, requests per server) from HAProxy's stats socket.
package apptier

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/scalelab/scalelab/app"
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
)

// Name is the kind of the app tier's clusters (`scalelab cluster up app`).
const Name = "app"

// EnvCLI, set in a node's environment, makes any binary that links
// scalelab's command line (scalelab itself, its test binaries) run the
// command line with its arguments: how the app servers start.
const EnvCLI = "SCALELAB_CLI"

// Options the app provisioner reads from cluster.Spec.Options; the
// scenario's own settings come as "set.KEY".
const (
	OptScenario       = "scenario"        // the web scenario served (records, mhealth)
	OptStore          = "store"           // the store cluster's name; "" for a SQLite file of the app cluster's own
	OptCache          = "cache_cluster"   // the cache tier's cluster (redis, memcached); "" for none
	OptMaxInFlight    = "max_inflight"    // requests each server works on at once
	OptMaxQueue       = "max_queue"       // requests each server lets wait for a worker (more: 503 at once); 0: unbounded
	OptProcs          = "procs"           // GOMAXPROCS of each server; 0: the machine's CPUs
	OptRequestTimeout = "request_timeout" // each server's request timeout
	OptBalance        = "balance"         // roundrobin or leastconn
	OptCheck          = "check_interval"  // the balancer's health-check interval
	// SetPrefix starts an option that is a scenario setting for every
	// server: set.records.eager=true.
	SetPrefix = "set."
)

// Params of an app cluster's state the runner reads.
const (
	ParamScenario    = "scenario"
	ParamStore       = "store_cluster" // the store cluster; "" with a SQLite file
	ParamStoreEngine = "store_engine"
	ParamStoreTarget = "store_target"  // the SQLite file when there is no store cluster
	ParamCache       = "cache_cluster" // the cache tier's cluster; "" for none
	ParamSocket      = "stats_socket"
)

// Roles of an app cluster's nodes.
const (
	RoleServer   = "app"
	RoleBalancer = "balancer"
)

func init() { cluster.Register(Provisioner{}) }

// Provisioner starts app clusters.
type Provisioner struct{}

// Engine names the provisioner: app.
func (Provisioner) Engine() string { return Name }

// Tier says that app clusters are the app tier, not a store.
func (Provisioner) Tier() string { return Name }

// Up starts the app servers, waits until each serves its health check,
// then starts HAProxy in front of them and waits until it sees every
// server up.
func (Provisioner) Up(ctx context.Context, spec cluster.Spec, st *cluster.State) error {
	o, err := parseOptions(spec)
	if err != nil {
		return err
	}
	hap, err := HAProxyPath()
	if err != nil {
		return err
	}
	version, err := haproxyVersion(ctx, hap)
	if err != nil {
		return err
	}
	exe, err := scalelabBinary()
	if err != nil {
		return err
	}
	base, secret, err := serverArgs(st, o, exe)
	if err != nil {
		return err
	}
	if err := prepareNet(st, o); err != nil {
		return err
	}
	var servers []string
	for i := 1; i <= o.servers; i++ {
		server, err := startServer(ctx, st, o, base, i)
		if err != nil {
			return err
		}
		servers = append(servers, server)
	}
	sock := filepath.Join(st.Dir, "haproxy.sock")
	listen, err := startBalancer(st, o, hap, servers, sock)
	if err != nil {
		return err
	}
	st.Target = "http://" + listen
	recordParams(st, o, version, sock)
	listens := "the balancer and the servers listen on loopback only"
	if st.Net != nil {
		listens = "the balancer listens on loopback, the servers on the cluster's bridge " + st.Net.Subnet + " only"
	}
	st.Auth = "session cookies, where the scenario has sessions (records), signed with the secret in " + secret + " (0600, shared by the servers); " + listens
	return waitBalanced(ctx, st, o, listen, sock)
}

// scalelabBinary returns the path of the running scalelab binary, links resolved.
func scalelabBinary() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("app: the scalelab binary: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return "", fmt.Errorf("app: the scalelab binary: %w", err)
	}
	return exe, nil
}

// serverArgs makes the servers' session secret and returns their `serve` command line (without --listen) and the secret's file.
func serverArgs(st *cluster.State, o options, exe string) ([]string, string, error) {
	base := []string{exe, "serve", o.scenario}
	if o.store != nil {
		base = append(base, "--cluster", o.store.Name)
		st.Params[ParamStore], st.Params[ParamStoreEngine] = o.store.Name, o.store.Engine
	} else {
		file := filepath.Join(st.Dir, o.scenario+".db")
		base = append(base, "--engine", engine.Default, "--target", file)
		st.Params[ParamStoreEngine], st.Params[ParamStoreTarget] = engine.Default, file
	}
	if o.cache != nil {
		base = append(base, "--cache-cluster", o.cache.Name)
		st.Params[ParamCache] = o.cache.Name
	}
	base = append(base, "--max-inflight", strconv.Itoa(o.maxInFlight), "--request-timeout", o.timeout.String(), "--procs", strconv.Itoa(o.procs))
	if o.maxQueue > 0 {
		base = append(base, "--max-queue", strconv.Itoa(o.maxQueue))
	}
	secret := filepath.Join(st.Dir, "secret")
	if _, err := cluster.NewSecret(secret); err != nil {
		return nil, "", fmt.Errorf("app: session secret: %w", err)
	}
	st.SecretFile = secret
	base = append(base, "--secret-file", secret)
	for _, s := range o.sets {
		base = append(base, "--set", s)
	}
	return base, secret, nil
}

// startServer starts app server i, waits until it serves its health check, and returns its balancer entry (name=address).
func startServer(ctx context.Context, st *cluster.State, o options, base []string, i int) (string, error) {
	// with --netns each server has a namespace, so a port of its own
	port, err := cluster.FreePort(cluster.Loopback)
	if err != nil {
		return "", fmt.Errorf("app: %w", err)
	}
	name := fmt.Sprintf("app%d", i)
	host, err := st.NodeHost(name)
	if err != nil {
		return "", fmt.Errorf("app: %w", err)
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	via, err := routes(st, o, name)
	if err != nil {
		return "", err
	}
	cmd := append(append(append([]string{}, base...), "--listen", addr), via...)
	// the balancer, on the host, reaches the server directly or
	// through its link's proxy
	n, err := st.AddNode(cluster.Node{Name: name, Role: RoleServer, Host: host, Port: port, Ports: map[string]int{"http": port},
		LogFile: filepath.Join(st.Dir, name+".log"), Cmd: cmd, Env: []string{EnvCLI + "=1"}}, st.Dir)
	if err != nil {
		return "", fmt.Errorf("app: %w", err)
	}
	// one at a time: servers on one SQLite file must not open it at once
	url := "http://" + addr + app.HealthPath
	if err := cluster.WaitNodes(ctx, st, name+" serving "+url, 50*time.Millisecond, func() bool { return healthy(url) }); err != nil {
		return "", fmt.Errorf("app: %w", err)
	}
	return name + "=" + n.ClientAddress(), nil
}

// startBalancer writes HAProxy's configuration for servers and starts it, returning its listen address.
func startBalancer(st *cluster.State, o options, hap string, servers []string, sock string) (string, error) {
	host := cluster.Loopback
	port, err := cluster.FreePort(host)
	if err != nil {
		return "", fmt.Errorf("app: %w", err)
	}
	listen := net.JoinHostPort(host, strconv.Itoa(port))
	cfgPath := filepath.Join(st.Dir, "haproxy.cfg")
	cfg := haproxyConfig(balancerConfig{Listen: listen, Servers: servers, Algorithm: o.balance, Check: o.check, Socket: sock, Timeout: o.timeout})
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return "", fmt.Errorf("app: balancer config: %w", err)
	}
	lb := cluster.Node{Name: "lb", Role: RoleBalancer, Host: host, Port: port, Ports: map[string]int{"http": port},
		LogFile: filepath.Join(st.Dir, "haproxy.log"), Cmd: []string{hap, "-db", "-f", cfgPath}}
	if _, err := st.Launch(lb, st.Dir); err != nil {
		return "", fmt.Errorf("app: balancer: %w", err)
	}
	return listen, nil
}

// recordParams records the scenario, the balancer and the servers' settings in st's params.
func recordParams(st *cluster.State, o options, version, sock string) {
	st.Params[ParamScenario] = o.scenario
	st.Params[ParamSocket] = sock
	st.Params["servers"] = strconv.Itoa(o.servers)
	st.Params["balancer"] = "HAProxy " + version
	st.Params[OptBalance] = o.balance
	st.Params[OptCheck] = o.check.String()
	st.Params[OptMaxInFlight] = strconv.Itoa(o.maxInFlight)
	st.Params[OptProcs] = strconv.Itoa(o.procs)
	if o.maxQueue > 0 {
		st.Params[OptMaxQueue] = strconv.Itoa(o.maxQueue)
	}
	st.Params[OptRequestTimeout] = o.timeout.String()
	if len(o.sets) > 0 {
		st.Params["settings"] = strings.Join(o.sets, " ")
	}
}

// waitBalanced waits until HAProxy at listen reports every app server up.
func waitBalanced(ctx context.Context, st *cluster.State, o options, listen, sock string) error {
	allUp := func() bool {
		rows, err := Stats(ctx, sock)
		if err != nil {
			return false
		}
		up := 0
		for _, r := range rows {
			if r.Proxy == "app" && r.Name != "BACKEND" && r.Status == "UP" {
				up++
			}
		}
		return up == o.servers
	}
	if err := cluster.WaitNodes(ctx, st, "HAProxy at "+listen+" with every server up", 100*time.Millisecond, allUp); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	return nil
}

// healthy reports whether url answers 200.
func healthy(url string) bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
