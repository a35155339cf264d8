package apptier

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/scalelab/scalelab/cluster"
)

// Servers reads the balancer's rows of an app cluster's servers (not the
// frontend or backend totals).
func Servers(ctx context.Context, st *cluster.State) ([]ServerStats, error) {
	rows, err := Stats(ctx, st.Params[ParamSocket])
	if err != nil {
		return nil, err
	}
	var out []ServerStats
	for _, r := range rows {
		if r.Proxy == "app" && r.Name != "BACKEND" {
			out = append(out, r)
		}
	}
	return out, nil
}

// Status reports each process and, for each app server, the balancer's
// view of it: its status and the requests it was sent.
func (Provisioner) Status(ctx context.Context, st *cluster.State) ([]cluster.NodeStatus, error) {
	byName := map[string]ServerStats{}
	rows, statsErr := Stats(ctx, st.Params[ParamSocket])
	for _, r := range rows {
		byName[r.Proxy+"/"+r.Name] = r
	}
	out := make([]cluster.NodeStatus, 0, len(st.Nodes))
	for _, n := range st.Nodes {
		ns := cluster.NodeStatus{Node: n, Alive: cluster.Alive(n.PID), Detail: map[string]string{}}
		switch {
		case n.Role == RoleBalancer && statsErr != nil:
			ns.Detail["stats"] = "unavailable: " + statsErr.Error()
		case n.Role == RoleBalancer:
			fe := byName["web/FRONTEND"]
			ns.Detail["requests"] = strconv.FormatInt(fe.Requests, 10)
			ns.Detail["url"] = st.Target
		default:
			if r, ok := byName["app/"+n.Name]; ok {
				ns.Detail["balancer"] = r.Status
				ns.Detail["requests"] = strconv.FormatInt(r.Requests, 10)
				if r.Downs > 0 {
					ns.Detail["downs"] = strconv.FormatInt(r.Downs, 10)
				}
			}
		}
		out = append(out, ns)
	}
	return out, nil
}

// Health is the balancer's view: green when it runs and every app server
// whose process runs is up in it (a server that died counts once the
// balancer has marked it down, as a store that re-replicated would),
// yellow while a running server is down or a dead one still up, red when
// no server is up, unreachable when the balancer does not answer.
func (Provisioner) Health(ctx context.Context, st *cluster.State) (cluster.Health, error) {
	h := cluster.Health{Of: len(st.Nodes), Detail: map[string]string{}}
	servers, err := Servers(ctx, st)
	if err != nil {
		h.Status = cluster.Unreachable
		h.Detail["balancer"] = "unreachable"
		return h, nil
	}
	h.Nodes = 1 // the balancer
	up, wrong := 0, 0
	alive := map[string]bool{}
	for _, n := range st.Nodes {
		alive[n.Name] = cluster.Alive(n.PID)
	}
	for _, s := range servers {
		status, _, _ := strings.Cut(s.Status, " ")
		h.Detail[s.Name] = status
		if s.Up() {
			up++
			if alive[s.Name] {
				h.Nodes++
			} else {
				wrong++
			}
		} else if alive[s.Name] {
			wrong++
		}
	}
	switch {
	case up == 0:
		h.Status = cluster.Red
	case wrong > 0:
		h.Status = cluster.Yellow
	default:
		h.Status = cluster.Green
	}
	return h, nil
}

// Describe says in one line what an app cluster is, for `cluster up` and
// `status`.
func Describe(st *cluster.State) string {
	store := st.Params[ParamStore]
	if store == "" {
		store = "sqlite " + st.Params[ParamStoreTarget]
	} else {
		store = "cluster " + store + " (" + st.Params[ParamStoreEngine] + ")"
	}
	return fmt.Sprintf("%s servers of %s behind %s (%s, health check every %s) at %s; store: %s",
		st.Params["servers"], st.Params[ParamScenario], st.Params["balancer"], st.Params[OptBalance], st.Params[OptCheck], st.Target, store)
}
