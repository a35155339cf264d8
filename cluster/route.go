package cluster

import (
	"fmt"
	"regexp"
	"strings"
)

// Route sends a client that cannot reach a node's client address (an app
// server in a network namespace of its own, a store node on loopback) to
// another address that leads there: a proxy on the client's bridge.
type Route struct {
	From string // the node's client address, host:port
	To   string // where the client reaches it, host:port
}

// ParseRoute reads FROM=TO, both host:port.
func ParseRoute(s string) (Route, error) {
	from, to, ok := strings.Cut(s, "=")
	if !ok || !strings.Contains(from, ":") || !strings.Contains(to, ":") {
		return Route{}, fmt.Errorf("route %q: HOST:PORT=HOST:PORT expected", s)
	}
	return Route{From: from, To: to}, nil
}

// String is the route as ParseRoute reads it.
func (r Route) String() string { return r.From + "=" + r.To }

// Reroute makes the client addresses of st (its target and each node's
// client address) those the routes give, so that an engine opened on st
// reaches the nodes through them; it changes st in memory only.
func (st *State) Reroute(routes []Route) {
	for _, r := range routes {
		// an address is followed by a path, a comma or the end, never by
		// another digit of a longer port
		re := regexp.MustCompile(regexp.QuoteMeta(r.From) + `(\D|$)`)
		st.Target = re.ReplaceAllString(st.Target, r.To+"$1")
		for i := range st.Nodes {
			if st.Nodes[i].ClientAddress() == r.From {
				st.Nodes[i].Client = r.To
			}
		}
	}
}
