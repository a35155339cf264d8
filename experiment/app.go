package experiment

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/scalelab/scalelab/apptier"
	"github.com/scalelab/scalelab/scenario"
)

// AppKeys are the app tier's fields: under `app:` in the file, or varied
// by a factor named app.FIELD (app.servers: [1, 2, 4]).
var AppKeys = []string{"servers", "max_inflight", "max_queue", "procs", "request_timeout", "balance", "check_interval", "cpus", "memory", "netns", "link"}

// AppSpec asks for an app tier in front of the store: servers of the web
// scenario behind HAProxy (`scalelab cluster up app`), started for the runs
// that use it on their store cluster (or a SQLite file of its own).
type AppSpec struct {
	Pos    Pos
	Fields map[string]string // AppKeys given, by name
}

// appField is the field a factor key app.FIELD sets, "" for other keys.
func appField(key string) string {
	f, ok := strings.CutPrefix(key, "app.")
	if !ok || !contains(AppKeys, f) {
		return ""
	}
	return f
}

// checkApp checks a value of an app field.
func checkApp(field, raw string) error {
	switch field {
	case "servers":
		if n, err := strconv.Atoi(raw); err != nil || n < 1 || n > apptier.MaxServers {
			return fmt.Errorf("%q: allowed: an integer in [1, %d]", raw, apptier.MaxServers)
		}
	case "max_inflight", "max_queue", "procs":
		if n, err := strconv.Atoi(raw); err != nil || n < 0 {
			return fmt.Errorf("%q: allowed: an integer, 0 or more", raw)
		}
	case "request_timeout", "check_interval":
		if d, err := time.ParseDuration(raw); err != nil || d <= 0 {
			return fmt.Errorf("%q: allowed: a duration such as 30s", raw)
		}
	case "balance":
		if raw != "roundrobin" && raw != "leastconn" {
			return fmt.Errorf("%q: allowed: roundrobin, leastconn", raw)
		}
	case "cpus", "memory", "link":
		return checkCluster(field, raw)
	case "netns":
		if raw != "true" && raw != "false" {
			return fmt.Errorf("%q: allowed: true, false", raw)
		}
	default:
		return fmt.Errorf("%q is not an app field; allowed: %s", field, strings.Join(AppKeys, ", "))
	}
	return nil
}

// app decodes the file's `app:` mapping.
func (d *decoder) app(s *Spec, n *yaml.Node) {
	a := &AppSpec{Pos: posOf(n), Fields: map[string]string{}}
	for _, f := range d.fields(n, "app", AppKeys) {
		ff := join("app", f.key)
		if v := d.str(f.v, ff); v.Set {
			if err := checkApp(f.key, v.Text); err != nil {
				d.errorf(f.v, ff, "%v", err)
				continue
			}
			a.Fields[f.key] = v.Text
		}
	}
	s.App = a
}

// appCluster is the app cluster a combination's runs drive: the file's
// app fields, then its levels' app.FIELD values, and as the servers'
// settings every setting of the combination that belongs to the scenario
// or the store's engine (so that records.eager=true reaches the servers).
// The store cluster is filled in when it has started. nil when the file
// has no app tier.
func (s *Spec) appCluster(c *Combination, levels map[string]string) *ClusterSpec {
	if s.App == nil && len(levels) == 0 {
		return nil
	}
	fields := map[string]string{}
	if s.App != nil {
		for k, v := range s.App.Fields {
			fields[k] = v
		}
	}
	for k, v := range levels {
		fields[k] = v
	}
	cs := &ClusterSpec{Engine: apptier.Name, Options: map[string]string{apptier.OptScenario: s.Scenario.Text}, Timeout: 2 * time.Minute}
	if s.App != nil {
		cs.Pos = s.App.Pos
	}
	cs.Nodes, _ = strconv.Atoi(fields["servers"])
	cs.CPUs, cs.Memory = fields["cpus"], fields["memory"]
	// each server in a namespace of its own, with emulated links (which
	// imply it), as cluster up app --netns --link
	cs.Netns, cs.Link = fields["netns"] == "true", fields["link"]
	for _, k := range []string{"max_inflight", "max_queue", "procs", "request_timeout", "balance", "check_interval"} {
		if v, ok := fields[k]; ok {
			cs.Options[k] = v
		}
	}
	scen, _ := scenario.Lookup(s.Scenario.Text)
	for _, a := range c.Sets {
		k, v, _ := strings.Cut(a, "=")
		p, _, _ := strings.Cut(k, ".")
		own := p == s.Scenario.Text || (scen != nil && scenario.Declares(scen, k)) // records.eager, cache.mode
		if (own || p == c.Engine) && k != s.Scenario.Text+".app" && k != s.Scenario.Text+".secret_file" {
			cs.Options[apptier.SetPrefix+k] = v
		}
	}
	if cl := cacheTier(c.Tiers).Cluster; cl != "" {
		cs.Options[apptier.OptCache] = cl // the servers cache in it
	}
	return cs
}

// groupKey identifies the clusters a combination's runs need: its store
// cluster, its app cluster and its cache tier's cluster.
func groupKey(c *Combination) string {
	k := clusterKey(c.Cluster)
	if c.App != nil {
		k += " | app " + clusterKey(c.App)
	}
	if c.Cache != nil {
		k += " | cache " + clusterKey(c.Cache)
	}
	return k
}

// appShape says what an app cluster is, for progress lines.
func appShape(cs *ClusterSpec, store string) string {
	n := max(cs.Nodes, 1)
	if cs.Nodes == 0 {
		n = 2
	}
	var sets []string
	for k, v := range cs.Options {
		if strings.HasPrefix(k, apptier.SetPrefix) {
			sets = append(sets, strings.TrimPrefix(k, apptier.SetPrefix)+"="+v)
		}
	}
	sort.Strings(sets)
	where := "a SQLite file"
	if store != "" {
		where = "cluster " + store
	}
	s := fmt.Sprintf("%d servers of %s on %s behind HAProxy", n, cs.Options[apptier.OptScenario], where)
	if nw := cs.NetworkText(); nw != "" {
		s += ", " + nw
	}
	if len(sets) > 0 {
		s += ", " + strings.Join(sets, " ")
	}
	return s
}
