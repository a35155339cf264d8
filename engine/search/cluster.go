package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/cluster/jvm"
	"github.com/scalelab/scalelab/setting"
)

func init() {
	cluster.Register(&Provisioner{engine: OpenSearch})
	cluster.Register(&Provisioner{engine: Elasticsearch})
}

// Provisioner starts local clusters of one distribution: one JVM per node
// (so a node can be killed alone), every node on 127.0.0.1 (or in its own
// network namespace with --netns) with its own
// free HTTP and transport ports, data and log under the cluster's
// directory.
//
// Roles (--roles, one entry per node, '+' joins several): cm
// (cluster-manager eligible, "master" on Elasticsearch), data (data and
// ingest, as the search-cluster study's data nodes), ingest, coord
// (coordinating only: no role), all (cm+data+ingest, the default). At least
// one node must be cm. The cluster's target lists every node but dedicated
// cluster managers, which clients should not load.
//
// Its options (Options) are the nodes and their roles, the JVM's (heap,
// jvm_options, exit_with_pid) and delete_on_exit.
type Provisioner struct {
	engine string
}

var _ cluster.Provisioner = (*Provisioner)(nil)

// Engine returns the engine name.
func (p *Provisioner) Engine() string { return p.engine }

// OptDeleteOnExit is the option that removes a node's directory when it
// stops.
const OptDeleteOnExit = "delete_on_exit"

// MaxNodes is the largest cluster `cluster up` starts on one machine.
const MaxNodes = 16

// Options declares what these clusters take: --nodes and --roles, the
// JVM's options and delete_on_exit.
func (p *Provisioner) Options() cluster.Options {
	return cluster.Options{Specs: append([]setting.Spec{
		cluster.NodesOption(1, MaxNodes, "nodes (default: one per --roles entry, else 1)"),
		{Key: cluster.OptRoles, Kind: setting.String, Default: "",
			Description: "per-node roles, comma-separated, '+' joins several: cm (cluster-manager eligible), data, ingest, coord, all (the default: cm+data+ingest), e.g. cm,data,data",
			Check: func(v setting.Value) error {
				if v.String() == "" {
					return nil
				}
				_, err := parseRoles(0, strings.Split(v.String(), ","))
				return err
			}},
		{Key: OptDeleteOnExit, Kind: setting.Bool, Default: "false", Description: "remove a node's directory when it stops"},
	}, jvm.NodeOptionSpecs(DefaultHeap)...)}
}

// DefaultHeap is the JVM heap of a node when --heap is not given.
const DefaultHeap = "512m"

// AuthNote is the cluster's Auth text: these clusters run without
// authentication, and why.
const AuthNote = "none: nodes bind to 127.0.0.1 only; the codelibs runner artifacts carry no security plugin " +
	"(OpenSearch's needs its own plugin jars and TLS certificates; Elasticsearch 7.10.2 security is X-Pack, not Apache-licensed)"

// nodeRoles is a node's roles in scalelab's words.
type nodeRoles struct {
	cm, data, ingest bool
}

// names lists the node's roles, the cluster-manager role called cm.
func (r nodeRoles) names(cm string) []string {
	var parts []string
	if r.cm {
		parts = append(parts, cm)
	}
	if r.data {
		parts = append(parts, "data")
	}
	if r.ingest {
		parts = append(parts, "ingest")
	}
	return parts
}

func (r nodeRoles) String() string {
	parts := r.names("cm")
	if len(parts) == 0 {
		return "coord"
	}
	return strings.Join(parts, "+")
}

// server returns the node.roles list for the distribution.
func (r nodeRoles) server(d *distribution) string {
	return "[" + strings.Join(r.names(d.cmRole), ",") + "]"
}

// parseRoles resolves --nodes and --roles into one nodeRoles per node.
func parseRoles(nodes int, roles []string) ([]nodeRoles, error) {
	if len(roles) > 0 && nodes > 0 && len(roles) != nodes {
		return nil, fmt.Errorf("--roles lists %d nodes but --nodes is %d", len(roles), nodes)
	}
	if nodes == 0 {
		nodes = max(1, len(roles))
	}
	out := make([]nodeRoles, nodes)
	cms := 0
	for i := range out {
		if len(roles) == 0 {
			out[i] = nodeRoles{cm: true, data: true, ingest: true}
			cms++
			continue
		}
		for _, r := range strings.Split(strings.TrimSpace(roles[i]), "+") {
			switch strings.TrimSpace(r) {
			case "cm", "cluster_manager", "master":
				out[i].cm = true
			case "data":
				out[i].data, out[i].ingest = true, true
			case "ingest":
				out[i].ingest = true
			case "coord":
			case "all":
				out[i] = nodeRoles{cm: true, data: true, ingest: true}
			default:
				return nil, fmt.Errorf("--roles: node %d: unknown role %q; allowed: cm, data, ingest, coord, all, joined with '+' (e.g. cm,data,data)", i+1, r)
			}
		}
		if out[i].cm {
			cms++
		}
	}
	if cms == 0 {
		return nil, errors.New("--roles: at least one node must be cm (cluster-manager eligible)")
	}
	hasData := false
	for _, r := range out {
		hasData = hasData || r.data
	}
	if !hasData {
		return nil, errors.New("--roles: at least one node must hold data")
	}
	return out, nil
}

// Netns reports that the nodes bind to the address cluster.NodeHost gives
// them, so --netns puts each in its own network namespace.
func (p *Provisioner) Netns() bool { return true }

// Up starts the nodes and waits until the cluster is green with every node.
func (p *Provisioner) Up(ctx context.Context, spec cluster.Spec, st *cluster.State) error {
	c, err := p.plan(spec, st)
	if err != nil {
		return err
	}
	st.Auth = AuthNote
	if st.Net != nil {
		st.Auth = strings.Replace(AuthNote, "127.0.0.1 only", "the cluster's own network "+st.Net.Subnet+" only (reachable from this machine alone)", 1)
	}
	var targets []string
	for i, r := range c.roles {
		node, err := c.startNode(st, i)
		if err != nil {
			return err
		}
		if r.data || r.ingest || !r.cm {
			targets = append(targets, node.ClientAddress())
		}
	}
	st.Target = "http://" + strings.Join(targets, ",")
	st.Params["distribution"] = p.engine
	c.no.Record(st.Params, c.java, c.javaVersion)
	st.Params["roles"] = rolesText(st.Nodes)
	if err := st.Save(); err != nil {
		return err
	}
	if err := waitGreen(ctx, st, len(c.roles)); err != nil {
		return err
	}
	if v, err := serverVersion(ctx, st.Nodes[0]); err == nil {
		st.Params[cluster.ParamVersion] = v
	}
	return nil
}

// nodePorts are a node's HTTP and transport ports.
type nodePorts struct{ http, transport int }

// launch is what starting a cluster's nodes takes: the distribution, the
// nodes' roles, the JVM, and each node's address and ports.
type launch struct {
	d            *distribution
	roles        []nodeRoles // one per node
	no           jvm.NodeOptions
	deleteOnExit bool
	java         string
	javaVersion  int
	cp           string
	ports        []nodePorts // node i's ports
	hosts        []string    // node i's address
	seeds, cms   []string    // every node's transport address; the cluster-manager-eligible nodes' names
}

// plan resolves spec's nodes and roles, finds the JDK and the classpath, and picks each node's ports and address.
func (p *Provisioner) plan(spec cluster.Spec, st *cluster.State) (*launch, error) {
	c := &launch{d: distributions[p.engine]}
	opts, err := cluster.Resolve(p, spec)
	if err != nil {
		return nil, err
	}
	nodes := 0 // one per role then, else 1
	if opts.Given(cluster.OptNodes) {
		nodes = int(opts.Get(cluster.OptNodes).Int())
	}
	var roleList []string
	if r := opts.Get(cluster.OptRoles).String(); r != "" {
		roleList = strings.Split(r, ",")
	}
	if c.roles, err = parseRoles(nodes, roleList); err != nil {
		return nil, err
	}
	c.no = jvm.NodeOptionsOf(opts)
	c.deleteOnExit = opts.Get(OptDeleteOnExit).Bool()
	if c.java, c.javaVersion, err = c.d.JDK(); err != nil {
		return nil, err
	}
	if c.cp, err = c.d.Classpath(); err != nil {
		return nil, err
	}
	if c.ports, err = freePorts(len(c.roles)); err != nil {
		return nil, err
	}
	if c.hosts, err = nodeHosts(st, len(c.roles)); err != nil {
		return nil, err
	}
	for i, r := range c.roles {
		c.seeds = append(c.seeds, net.JoinHostPort(c.hosts[i], strconv.Itoa(c.ports[i].transport)))
		if r.cm {
			c.cms = append(c.cms, fmt.Sprintf("node%d", i+1))
		}
	}
	return c, nil
}

// freePorts picks n nodes' HTTP and transport ports, free on loopback and all different.
func freePorts(n int) ([]nodePorts, error) {
	out := make([]nodePorts, n)
	used := map[int]bool{}
	for i := range out {
		for _, pp := range []*int{&out[i].http, &out[i].transport} {
			for {
				port, err := cluster.FreePort(cluster.Loopback)
				if err != nil {
					return nil, err
				}
				if !used[port] {
					used[port] = true
					*pp = port
					break
				}
			}
		}
	}
	return out, nil
}

// nodeHosts returns each of n nodes' address: loopback, or its own namespace's with --netns.
func nodeHosts(st *cluster.State, n int) ([]string, error) {
	hosts := make([]string, n)
	for i := range hosts {
		var err error
		if hosts[i], err = st.NodeHost(fmt.Sprintf("node%d", i+1)); err != nil {
			return nil, err
		}
	}
	return hosts, nil
}

// startNode makes node i's tmp directory and starts the node, adding it to st.
func (c *launch) startNode(st *cluster.State, i int) (cluster.Node, error) {
	name := fmt.Sprintf("node%d", i+1)
	home := filepath.Join(st.Dir, name)
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o700); err != nil {
		return cluster.Node{}, fmt.Errorf("node %s: %w", name, err)
	}
	// the load generator's address: the node's, or its link's proxy
	node, err := st.AddNode(cluster.Node{
		Name: name, Role: c.roles[i].String(), Host: c.hosts[i], Port: c.ports[i].http,
		Ports:   map[string]int{"http": c.ports[i].http, "transport": c.ports[i].transport},
		DataDir: home, LogFile: filepath.Join(st.Dir, name+".log"), Cmd: c.command(st, i, name, home),
	}, home)
	if err != nil {
		return cluster.Node{}, fmt.Errorf("node %s: %w", name, err)
	}
	return node, nil
}

// command is node i's command line: the JVM, the distribution's launcher and the node's settings.
func (c *launch) command(st *cluster.State, i int, name, home string) []string {
	cmd := c.no.Command(c.java, commonJVMFlags, c.d.jvmFlags)
	cmd = append(cmd, "-Djava.io.tmpdir="+filepath.Join(home, "tmp"), "-cp", c.cp, c.d.mainClass, "--home", home)
	if c.no.ExitWithPID > 0 {
		cmd = append(cmd, "--exit-with-pid", strconv.Itoa(c.no.ExitWithPID))
	}
	if c.deleteOnExit {
		cmd = append(cmd, "--delete-home-on-exit")
	}
	for _, s := range c.settings(st, i, name, home) {
		cmd = append(cmd, "-E"+s)
	}
	return cmd
}

// settings are node i's server settings (its -E flags), discovery included.
func (c *launch) settings(st *cluster.State, i int, name, home string) []string {
	settings := []string{
		"cluster.name=" + st.Name,
		"node.name=" + name,
		"node.roles=" + c.roles[i].server(c.d),
		"network.host=" + c.hosts[i],
		"http.port=" + strconv.Itoa(c.ports[i].http),
		"transport.port=" + strconv.Itoa(c.ports[i].transport),
		"path.data=" + filepath.Join(home, "data"),
		"path.logs=" + filepath.Join(home, "logs"),
		"cluster.routing.allocation.disk.threshold_enabled=false",
		"action.destructive_requires_name=false",
	}
	if len(c.roles) == 1 {
		return append(settings, "discovery.type=single-node")
	}
	return append(settings,
		"discovery.seed_hosts=["+strings.Join(c.seeds, ",")+"]",
		c.d.initialCMs+"=["+strings.Join(c.cms, ",")+"]")
}

// rolesText is the nodes' roles in order, comma-separated (the roles param).
func rolesText(nodes []cluster.Node) string {
	var r []string
	for _, n := range nodes {
		r = append(r, n.Role)
	}
	return strings.Join(r, ",")
}

// httpGet fetches a node's URL path with a short timeout.
func httpGet(ctx context.Context, n cluster.Node, path string, timeout time.Duration) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := fmt.Sprintf("http://%s%s", net.JoinHostPort(n.Host, strconv.Itoa(n.Port)), path)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, err = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes(), err
}

// health is the part of _cluster/health we read.
type health struct {
	Status        string `json:"status"`
	NumberOfNodes int    `json:"number_of_nodes"`
}

// waitGreen waits until a node reports the cluster green with every node,
// failing early when a node process dies.
func waitGreen(ctx context.Context, st *cluster.State, nodes int) error {
	check := func() (bool, string) {
		state := "no node answers"
		for _, n := range st.Nodes {
			status, body, err := httpGet(ctx, n, "/_cluster/health?wait_for_status=green&timeout=1s", 5*time.Second)
			if err != nil || (status != http.StatusOK && status != http.StatusRequestTimeout) {
				continue
			}
			var h health
			if json.Unmarshal(body, &h) != nil {
				continue
			}
			if h.Status == "green" && h.NumberOfNodes == nodes {
				return true, ""
			}
			state = fmt.Sprintf("%s, %d of %d nodes joined", h.Status, h.NumberOfNodes, nodes)
		}
		return false, state
	}
	return cluster.WaitNodesState(ctx, st, fmt.Sprintf("%d nodes and status green", nodes), time.Second, check)
}

// serverVersion asks node n for the version of the server it runs.
func serverVersion(ctx context.Context, n cluster.Node) (string, error) {
	_, body, err := httpGet(ctx, n, "/", 5*time.Second)
	if err != nil {
		return "", err
	}
	var root struct {
		Version struct {
			Distribution string `json:"distribution"`
			Number       string `json:"number"`
		} `json:"version"`
	}
	if err := json.Unmarshal(body, &root); err != nil {
		return "", err
	}
	return root.Version.Number, nil
}

// Status reports each node: alive, and from the cluster's view its roles,
// whether it is the elected cluster manager, its heap use and the cluster
// health.
func (p *Provisioner) Status(ctx context.Context, st *cluster.State) ([]cluster.NodeStatus, error) {
	var out []cluster.NodeStatus
	var catNodes []NodeInfo
	healthStatus := "unreachable"
	for _, n := range st.Nodes {
		if !cluster.Alive(n.PID) {
			continue
		}
		status, body, err := httpGet(ctx, n, "/_cat/nodes?format=json&h=name,node.role,master,ip,heap.percent", 5*time.Second)
		if err != nil || status != http.StatusOK || json.Unmarshal(body, &catNodes) != nil {
			continue
		}
		if _, body, err := httpGet(ctx, n, "/_cluster/health", 5*time.Second); err == nil {
			var h health
			if json.Unmarshal(body, &h) == nil {
				healthStatus = h.Status
			}
		}
		break
	}
	byName := map[string]NodeInfo{}
	for _, ni := range catNodes {
		byName[ni.Name] = ni
	}
	for _, n := range st.Nodes {
		ns := cluster.NodeStatus{Node: n, Alive: cluster.Alive(n.PID), Detail: map[string]string{
			"transport": strconv.Itoa(n.Ports["transport"]),
			"auth":      "none",
		}}
		if ni, ok := byName[n.Name]; ok {
			ns.Detail["server_roles"] = ni.Roles
			ns.Detail["heap_used"] = ni.Heap + "%"
			ns.Detail["cluster"] = healthStatus
			if ni.Master == "*" {
				ns.Detail["elected_cm"] = "yes"
			}
		} else if ns.Alive {
			ns.Detail["cluster"] = "not joined"
		}
		out = append(out, ns)
	}
	return out, nil
}

var _ cluster.HealthChecker = (*Provisioner)(nil)

// Health asks the running nodes in turn for _cluster/health (2 s each, so
// a hung node does not hold the probe) and returns the first answer: the
// cluster's status, its node count and its unassigned shards. A node that
// answers without an elected cluster manager makes the health red.
func (p *Provisioner) Health(ctx context.Context, st *cluster.State) (cluster.Health, error) {
	h := cluster.Health{Status: cluster.Unreachable, Of: len(st.Nodes)}
	for _, n := range st.Nodes {
		if !cluster.Alive(n.PID) {
			continue
		}
		status, body, err := httpGet(ctx, n, "/_cluster/health", 2*time.Second)
		if err != nil {
			continue
		}
		if status != http.StatusOK {
			h.Status, h.Detail = cluster.Red, map[string]string{"cluster_manager": "none"}
			continue
		}
		var r struct {
			health
			Unassigned int `json:"unassigned_shards"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			continue
		}
		h = cluster.Health{Status: r.Status, Nodes: r.NumberOfNodes, Of: len(st.Nodes)}
		if r.Unassigned > 0 {
			h.Detail = map[string]string{"unassigned_shards": strconv.Itoa(r.Unassigned)}
		}
		return h, nil
	}
	return h, nil
}
