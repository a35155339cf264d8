package search

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/setting"
)

// SetEntryNodes is the setting naming the nodes every request enters the
// cluster through (after the engine's prefix).
const SetEntryNodes = "entry_nodes"

var entryRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+(:[0-9]{1,5})?$`)

// ParseEntryNodes splits an entry_nodes value ("node1", "node1,node3",
// "127.0.0.1:9200") into its entries; "" is none (the target's nodes).
func ParseEntryNodes(v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var out []string
	for _, e := range strings.Split(v, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if !entryRE.MatchString(e) {
			return nil, fmt.Errorf("entry %q: a node name (node1) or host:port expected, several comma-separated", e)
		}
		out = append(out, e)
	}
	return out, nil
}

func checkEntryNodes(v setting.Value) error {
	_, err := ParseEntryNodes(v.String())
	return err
}

// nodeScheme is the scheme of the first node URL (http by default).
func nodeScheme(nodes []string) string {
	if len(nodes) > 0 && strings.HasPrefix(nodes[0], "https://") {
		return "https"
	}
	return "http"
}

// isAddress reports whether an entry is host:port rather than a node name.
func isAddress(e string) bool { return strings.Contains(e, ":") }

// entryNode is a node requests enter through: its name (when known) and
// its URL.
type entryNode struct {
	Name, URL string
}

// resolveEntryNodes turns the entries into node URLs: a name is a node of
// the --cluster (any role, dedicated cluster managers too, which the
// cluster's target leaves out) or, with --target, a node the server names
// in _nodes/http; host:port is taken as it is, with the target's scheme.
func (e *Engine) resolveEntryNodes(ctx context.Context, entries []string, st *cluster.State, probe *Conn) ([]entryNode, error) {
	scheme := nodeScheme(probe.nodes)
	var known map[string]string // name -> host:port
	var names []string
	lookup := func() error {
		if known != nil {
			return nil
		}
		known = map[string]string{}
		if st != nil {
			for _, n := range st.Nodes {
				known[n.Name] = n.ClientAddress()
			}
		} else {
			ns, err := probe.httpNodes(ctx)
			if err != nil {
				return fmt.Errorf("%s: find the nodes' addresses: %w", e.Key(SetEntryNodes), err)
			}
			for _, n := range ns {
				known[n.Name] = n.Address
			}
		}
		for n := range known {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil
	}
	var out []entryNode
	for _, en := range entries {
		if isAddress(en) {
			out = append(out, entryNode{Name: en, URL: scheme + "://" + en})
			continue
		}
		if err := lookup(); err != nil {
			return nil, err
		}
		addr, ok := known[en]
		if !ok {
			msg := fmt.Sprintf("%s: no node %q in the cluster; its nodes: %s", e.Key(SetEntryNodes), en, strings.Join(names, ", "))
			if n := setting.Nearest(en, names); n != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", n)
			}
			return nil, fmt.Errorf("%w: %s", setting.ErrBadValue, msg)
		}
		out = append(out, entryNode{Name: en, URL: scheme + "://" + addr})
	}
	return out, nil
}

// httpNode is a node of the cluster with its name, id and HTTP address.
type httpNode struct {
	ID, Name, Address string
}

// httpNodes lists the cluster's nodes with their HTTP publish addresses.
func (c *Conn) httpNodes(ctx context.Context) ([]httpNode, error) {
	var r struct {
		Nodes map[string]struct {
			Name string `json:"name"`
			HTTP struct {
				Publish string `json:"publish_address"`
			} `json:"http"`
		} `json:"nodes"`
	}
	if err := c.call(ctx, http.MethodGet, "/_nodes/http", "", nil, &r); err != nil {
		return nil, err
	}
	var out []httpNode
	for id, n := range r.Nodes {
		addr := n.HTTP.Publish
		if i := strings.LastIndexByte(addr, '/'); i >= 0 { // "host/ip:port"
			addr = addr[i+1:]
		}
		out = append(out, httpNode{ID: id, Name: n.Name, Address: addr})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// restUsage reads, per node name, the REST requests each node has
// received since it started (_nodes/usage: requests that entered the
// cluster through that node), by action ("search_action", ...).
func (c *Conn) restUsage(ctx context.Context) (map[string]map[string]int64, error) {
	nodes, err := c.httpNodes(ctx)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, n := range nodes {
		names[n.ID] = n.Name
	}
	var r struct {
		Nodes map[string]struct {
			Rest map[string]int64 `json:"rest_actions"`
		} `json:"nodes"`
	}
	if err := c.call(ctx, http.MethodGet, "/_nodes/usage", "", nil, &r); err != nil {
		return nil, err
	}
	out := map[string]map[string]int64{}
	for id, n := range r.Nodes {
		name := names[id]
		if name == "" {
			name = id
		}
		out[name] = n.Rest
	}
	return out, nil
}

// usageDelta is what each node received between two restUsage readings:
// its search requests and all its REST requests but the usage readings'
// own, as "node1=5000,node2=0".
func usageDelta(before, after map[string]map[string]int64) (search, all string) {
	names := make([]string, 0, len(after))
	for n := range after {
		names = append(names, n)
	}
	sort.Strings(names)
	var s, a []string
	for _, n := range names {
		var sn, an int64
		for action, v := range after[n] {
			d := v - before[n][action]
			if action == "nodes_usage_action" || action == "nodes_info_action" {
				continue // the readings themselves
			}
			an += d
			if action == "search_action" {
				sn += d
			}
		}
		s = append(s, n+"="+strconv.FormatInt(sn, 10))
		a = append(a, n+"="+strconv.FormatInt(an, 10))
	}
	return strings.Join(s, ","), strings.Join(a, ",")
}

// nodeLabel names a node URL for the client's per-node counts: its entry
// name when it has one, else host:port.
func nodeLabel(u string, names map[string]string) string {
	if n, ok := names[u]; ok {
		return n
	}
	if _, hp, ok := strings.Cut(u, "://"); ok {
		return hp
	}
	return u
}

// errEntryAndClientNodes is returned when both ways of choosing the nodes
// are set.
var errEntryAndClientNodes = errors.New("set either entry_nodes (the nodes by name) or client_nodes (the first N of the target), not both")

// RequestsPerNode returns the requests the client has sent to each of its
// nodes since it connected, by entry name or host:port.
func (c *Conn) RequestsPerNode() map[string]int64 {
	out := map[string]int64{}
	if c.pool == nil {
		return out
	}
	for i, conn := range c.pool.conns {
		out[nodeLabel(strings.TrimSuffix(conn.URL.String(), "/"), c.names)] += c.pool.sent[i].Load()
	}
	return out
}

// AfterRun reports where the requests went: the client's own count per
// node since it connected (the data load included), and each node's REST
// requests from the server's _nodes/usage since Info ran before the load:
// the search requests and every request (the readings' own left out). A
// node that was an entry node receives what its clients sent it; the
// others only what the cluster forwards over its transport, which
// _nodes/usage does not count.
func (c *Conn) AfterRun(ctx context.Context) map[string]string {
	sent := c.RequestsPerNode()
	names := make([]string, 0, len(sent))
	for n := range sent {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		parts = append(parts, n+"="+strconv.FormatInt(sent[n], 10))
	}
	out := map[string]string{"client_requests_per_node": strings.Join(parts, ",")}
	c.mu.Lock()
	before := c.usage
	c.mu.Unlock()
	after, err := c.restUsage(ctx)
	switch {
	case err != nil:
		out["server_requests_per_node"] = "unavailable: " + err.Error()
	case before == nil:
		out["server_requests_per_node"] = "unavailable: no reading before the load"
	default:
		out["server_search_requests_per_node"], out["server_requests_per_node"] = usageDelta(before, after)
	}
	return out
}

var _ engine.PlanChecker = (*Engine)(nil)

// CheckPlan refuses entry_nodes beside client_nodes and, with a local
// cluster, entry node names the cluster does not have (naming its nodes
// and the nearest), before the run creates anything.
func (e *Engine) CheckPlan(set *setting.Set, cl *cluster.State) error {
	opts, err := e.OptionsFrom(set)
	if err != nil {
		return err
	}
	if len(opts.EntryNodes) > 0 && opts.ClientNodes > 0 {
		return fmt.Errorf("%w: %s and %s: %w", setting.ErrBadValue, e.Key(SetEntryNodes), e.Key(SetClientNodes), errEntryAndClientNodes)
	}
	if cl == nil {
		return nil
	}
	_, err = e.resolveEntryNodes(context.Background(), opts.EntryNodes, cl, &Conn{})
	return err
}
