package cluster

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/scalelab/scalelab/cluster/linkemu"
)

// LinkGrammar describes a --link value for error messages and help.
const LinkGrammar = "[NODE:]key=value[,key=value...] with keys delay and jitter (one way, whole milliseconds: 1ms, 20ms), loss (per cent each way: 0.5%) and rate (each way: 500kbit, 100mbit, 1gbit); without NODE, for every node"

// Link is one node's emulated network link: the path between the node and
// the bridge, so that a path between two nodes crosses two links (their
// delays add) and one between the load generator and a node crosses one.
type Link struct {
	Delay    time.Duration `json:"delay,omitempty"`     // one way, Toxiproxy's
	Jitter   time.Duration `json:"jitter,omitempty"`    // ± on the delay
	LossPct  float64       `json:"loss_pct,omitempty"`  // each way, nftables'
	RateKbit int64         `json:"rate_kbit,omitempty"` // each way, tc tbf's; 0: unlimited
}

// String is the link in --link form, e.g. "delay=1ms,loss=0.5%".
func (l Link) String() string {
	var p []string
	if l.Delay > 0 {
		p = append(p, "delay="+l.Delay.String())
	}
	if l.Jitter > 0 {
		p = append(p, "jitter="+l.Jitter.String())
	}
	if l.LossPct > 0 {
		p = append(p, "loss="+strconv.FormatFloat(l.LossPct, 'g', -1, 64)+"%")
	}
	if l.RateKbit > 0 {
		p = append(p, "rate="+strconv.FormatInt(l.RateKbit, 10)+"kbit")
	}
	if len(p) == 0 {
		return "none"
	}
	return strings.Join(p, ",")
}

// Links is a cluster's emulated links (cluster up --link), recorded in its
// state.
type Links struct {
	Spec    []string        `json:"spec"`            // the --link values
	All     Link            `json:"all"`             // every node's link
	Nodes   map[string]Link `json:"nodes,omitempty"` // nodes whose link differs
	Proxied bool            `json:"proxied"`         // delay or jitter given: proxies on every path
	API     string          `json:"api,omitempty"`   // the proxies' server
	PID     int             `json:"pid,omitempty"`
	Proxies []LinkProxy     `json:"proxies,omitempty"`
}

// LinkProxy is one proxied path.
type LinkProxy struct {
	Name     string `json:"name"`
	From     string `json:"from,omitempty"` // "" for the load generator
	To       string `json:"to"`
	Listen   string `json:"listen"`
	Upstream string `json:"upstream"`
}

// ParseLinks reads --link values: those for every node first, then those
// for one node on top of them, whatever their order.
func ParseLinks(specs []string) (*Links, error) {
	ls := &Links{Spec: specs, Nodes: map[string]Link{}}
	type part struct{ text, node, kvs string }
	var all, nodes []part
	for _, s := range specs {
		p := part{text: s, kvs: s}
		if before, after, ok := strings.Cut(s, ":"); ok && !strings.Contains(before, "=") {
			p.node, p.kvs = strings.TrimSpace(before), after
			if !strings.HasPrefix(p.node, "node") {
				return nil, fmt.Errorf("--link %q: %q is not a node name (node1, node2, ...); the form is %s", s, p.node, LinkGrammar)
			}
			nodes = append(nodes, p)
			continue
		}
		all = append(all, p)
	}
	for _, p := range append(all, nodes...) {
		l := ls.All
		if nl, ok := ls.Nodes[p.node]; ok && p.node != "" {
			l = nl
		}
		for _, kv := range strings.Split(p.kvs, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
			if !ok {
				return nil, fmt.Errorf("--link %q: %q is not key=value; the form is %s", p.text, kv, LinkGrammar)
			}
			k = strings.TrimSpace(k)
			if err := l.set(k, strings.TrimSpace(v)); err != nil {
				return nil, fmt.Errorf("--link %q: %w; the form is %s", p.text, err, LinkGrammar)
			}
			if k == "delay" || k == "jitter" {
				ls.Proxied = true
			}
		}
		if p.node == "" {
			ls.All = l
		} else {
			ls.Nodes[p.node] = l
		}
	}
	return ls, nil
}

// set reads one key of a link.
func (l *Link) set(k, v string) error {
	switch k {
	case "delay", "jitter":
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("%s %q is not a duration such as 1ms", k, v)
		}
		if d%time.Millisecond != 0 {
			return fmt.Errorf("%s %s: the proxies delay in whole milliseconds (without sch_netem in the kernel there is no finer delay here)", k, d)
		}
		if k == "delay" {
			l.Delay = d
		} else {
			l.Jitter = d
		}
	case "loss":
		f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
		if err != nil || f < 0 || f > 100 {
			return fmt.Errorf("loss %q: a per cent from 0 to 100 expected, e.g. 0.5%%", v)
		}
		l.LossPct = f
	case "rate":
		r, err := ParseRate(v)
		if err != nil {
			return err
		}
		l.RateKbit = r
	default:
		return fmt.Errorf("unknown key %q (allowed: delay, jitter, loss, rate)", k)
	}
	return nil
}

// ParseRate reads a bandwidth such as 500kbit, 100mbit or 1gbit, in
// kilobits per second.
func ParseRate(v string) (int64, error) {
	s := strings.ToLower(strings.TrimSpace(v))
	for _, u := range []struct {
		suffix string
		kbit   int64
	}{{"kbit", 1}, {"mbit", 1000}, {"gbit", 1000000}} {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			n, err := strconv.ParseFloat(num, 64)
			if err != nil || n <= 0 {
				break
			}
			if k := int64(n * float64(u.kbit)); k >= 8 {
				return k, nil
			}
		}
	}
	return 0, fmt.Errorf("rate %q: a bandwidth of at least 8kbit expected, e.g. 500kbit, 100mbit, 1gbit", v)
}

// Of is a node's link.
func (ls *Links) Of(node string) Link {
	if ls == nil {
		return Link{}
	}
	if l, ok := ls.Nodes[node]; ok {
		return l
	}
	return ls.All
}

// PrepareLinks records the cluster's links and, when they delay, starts
// the proxies' server; call after PrepareNet and before the provisioner's
// Up (which asks for proxied addresses with ClientAddr and PeerAddr).
func (st *State) PrepareLinks(ls *Links) error {
	if ls == nil {
		return nil
	}
	if st.Net == nil {
		return errors.New("--link: emulated links need each node on its own network: add --netns")
	}
	st.Links = ls
	st.Params["links"] = strings.Join(ls.Spec, " ")
	if !ls.Proxied {
		return st.Save()
	}
	port, err := FreePort(Loopback)
	if err != nil {
		return err
	}
	ls.API = net.JoinHostPort(Loopback, strconv.Itoa(port))
	if ls.PID, err = linkemu.Start(st.Dir, ls.API); err != nil {
		return fmt.Errorf("--link: %w", err)
	}
	return st.Save()
}

// proxy makes one proxied path to host:port, listening on listenHost.
func (st *State) proxy(from, to, listenHost, host string, port int) (string, int, error) {
	ls := st.Links
	lp, err := FreePort(listenHost)
	if err != nil {
		return "", 0, err
	}
	p := LinkProxy{From: from, To: to, Listen: net.JoinHostPort(listenHost, strconv.Itoa(lp)), Upstream: net.JoinHostPort(host, strconv.Itoa(port))}
	p.Name = fmt.Sprintf("%s-%d", to, port)
	if from != "" {
		p.Name = from + "-" + p.Name
	}
	if err := linkemu.Dial(ls.API).Add(p.Name, p.Listen, p.Upstream); err != nil {
		return "", 0, err
	}
	ls.Proxies = append(ls.Proxies, p)
	return listenHost, lp, st.Save()
}

// ClientAddr is the address the load generator uses for a node's port:
// the node's own, or with delaying links a proxy on loopback in front of
// it.
func (st *State) ClientAddr(node, host string, port int) (string, int, error) {
	if st.Links == nil || !st.Links.Proxied {
		return host, port, nil
	}
	return st.proxy("", node, Loopback, host, port)
}

// SetClient sets n.Client to the load generator's address of the node's
// port (ClientAddr) when that is not the node's own.
func (st *State) SetClient(n *Node) error {
	h, p, err := st.ClientAddr(n.Name, n.Host, n.Port)
	if err != nil {
		return err
	}
	if h != n.Host || p != n.Port {
		n.Client = net.JoinHostPort(h, strconv.Itoa(p))
	}
	return nil
}

// PeerAddr is the address node from uses to reach node to's port: to's
// own, or with delaying links a proxy on the bridge in front of it.
func (st *State) PeerAddr(from, to, host string, port int) (string, int, error) {
	if st.Links == nil || !st.Links.Proxied {
		return host, port, nil
	}
	return st.proxy(from, to, st.Net.Gateway, host, port)
}

// OutsideAddr is the address node from, in its namespace, uses to reach
// addr, the client address of another cluster's node to (on loopback or on
// that cluster's own bridge, neither of which from's namespace reaches): a
// proxy on from's bridge, which from's link delays and a partition of from
// cuts. It needs the links' proxies.
func (st *State) OutsideAddr(from, to, addr string) (string, error) {
	if st.Net == nil || st.Links == nil || !st.Links.Proxied {
		return "", fmt.Errorf("node %s reaches %s through a proxy on its bridge: the cluster needs --netns and its links' proxies", from, to)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%s at %q: %w", to, addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return "", fmt.Errorf("%s at %q: port: %w", to, addr, err)
	}
	h, lp, err := st.proxy(from, to, st.Net.Gateway, host, p)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(h, strconv.Itoa(lp)), nil
}

// ApplyLinks gives every node its link (after Up, and again at the start
// of a run, which undoes what a run that died left). A node without a
// namespace of its own (an app cluster's balancer, on the host) has no link.
func (st *State) ApplyLinks() error {
	if st.Links == nil {
		return nil
	}
	var errs []error
	known := map[string]bool{}
	for _, n := range st.Nodes {
		if st.OnHost(n.Name) {
			continue
		}
		known[n.Name] = true
		errs = append(errs, st.SetLink(n.Name, st.Links.Of(n.Name)))
	}
	for name := range st.Links.Nodes {
		if !known[name] {
			errs = append(errs, fmt.Errorf("--link %s: the cluster has no node %q; its nodes: %s", name, name, strings.Join(st.nodeNames(), ", ")))
		}
	}
	return errors.Join(errs...)
}

func (st *State) nodeNames() []string {
	var names []string
	for _, n := range st.Nodes {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	return names
}

// SetLink gives a node the link l (a fault's, or its own to restore it):
// loss and rate in its namespace, delay on every proxied path it ends (a
// path between two nodes takes both links' delays).
func (st *State) SetLink(node string, l Link) error {
	if st.Links == nil || st.Net == nil {
		return fmt.Errorf("node %s: the cluster has no emulated links (cluster up --netns --link ...)", node)
	}
	if err := st.Net.SetLoss(node, l.LossPct); err != nil {
		return err
	}
	if err := st.Net.SetRate(node, l.RateKbit); err != nil {
		return err
	}
	return st.SetDelay(node, l)
}

// SetDelay gives every proxied path the node ends l's delay and jitter
// (a path between two nodes takes both links'), and nothing else.
func (st *State) SetDelay(node string, l Link) error {
	if st.Links == nil {
		return fmt.Errorf("node %s: the cluster has no emulated links (cluster up --netns --link ...)", node)
	}
	if !st.Links.Proxied {
		if l.Delay > 0 || l.Jitter > 0 {
			return fmt.Errorf("node %s: delay needs the links' proxies: start the cluster with --link delay=0ms (or any delay)", node)
		}
		return nil
	}
	c := linkemu.Dial(st.Links.API)
	for _, p := range st.Links.Proxies {
		if p.To != node && p.From != node {
			continue
		}
		d := linkemu.Delay{Delay: l.Delay, Jitter: l.Jitter}
		if other := p.From; other != "" {
			if other == node {
				other = p.To
			}
			if st.OnHost(other) {
				// a node of another cluster: its own links, if any, are
				// its cluster's
				other = ""
			}
			o := Link{}
			if other != "" {
				o = st.Links.Of(other)
			}
			d.Delay += o.Delay
			d.Jitter += o.Jitter
		}
		if err := c.SetDelay(p.Name, d); err != nil {
			return err
		}
	}
	return nil
}

// Separate cuts the nodes of a from those of b (each side still reaches
// its own and the load generator): nftables rules in their namespaces and
// stalled proxies on the paths between them.
func (st *State) Separate(a, b []string) error {
	if st.Net == nil {
		return errors.New("partitions need each node on its own network (cluster up --netns)")
	}
	if err := st.Net.Separate(a, b); err != nil {
		return err
	}
	return st.eachCrossing(a, b, func(c *linkemu.Client, p LinkProxy) error { return c.Stall(p.Name) })
}

// Join undoes Separate for the nodes.
func (st *State) Join(nodes []string) error {
	if st.Net == nil {
		return nil
	}
	err := st.Net.Join(nodes)
	return errors.Join(err, st.eachCrossing(nodes, nodes, func(c *linkemu.Client, p LinkProxy) error { return c.Unstall(p.Name) }))
}

// eachCrossing calls f on each peer proxy between a node of a and one of b.
func (st *State) eachCrossing(a, b []string, f func(*linkemu.Client, LinkProxy) error) error {
	if st.Links == nil || !st.Links.Proxied {
		return nil
	}
	in := func(set []string, n string) bool {
		for _, s := range set {
			if s == n {
				return true
			}
		}
		return false
	}
	c := linkemu.Dial(st.Links.API)
	var errs []error
	for _, p := range st.Links.Proxies {
		if p.From != "" && ((in(a, p.From) && in(b, p.To)) || (in(b, p.From) && in(a, p.To))) {
			errs = append(errs, f(c, p))
		}
	}
	return errors.Join(errs...)
}

// stopLinks ends the proxies' server: SIGTERM, then SIGKILL if it still
// runs after 5 s; it returns once the process is gone.
func stopLinks(st *State) {
	if st.Links == nil || st.Links.PID <= 0 || !Alive(st.Links.PID) {
		return
	}
	pid := st.Links.PID
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		_ = syscall.Kill(pid, sig)
		for end := time.Now().Add(5 * time.Second); Alive(pid) && time.Now().Before(end); {
			time.Sleep(20 * time.Millisecond)
		}
		if !Alive(pid) {
			return
		}
	}
}
