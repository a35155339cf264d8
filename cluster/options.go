package cluster

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/scalelab/scalelab/setting"
)

// The option keys that `cluster up` also spells as flags of their own
// (--nodes, --replicas, --heap, --roles, --backend) and an experiment's
// cluster section as fields; every other option is --opt KEY=VALUE.
const (
	OptNodes    = "nodes"
	OptReplicas = "replicas"
	OptHeap     = "heap"
	OptRoles    = "roles"
	OptBackend  = "backend"
	// OptExitWithPID stops a cluster's nodes when that process exits:
	// how tests keep servers from outliving them.
	OptExitWithPID = "exit_with_pid"
)

// Options declares what a provisioner's clusters take: typed settings
// (kind, default, allowed values or range, one line each), and optionally
// a family of free keys that no declaration can list (the server's own
// configuration file, the app tier's scenario settings).
type Options struct {
	// Specs are the declared options; their keys carry no prefix
	// (memory_mb, tls).
	Specs []setting.Spec
	// Free, when not nil, takes the keys no spec declares.
	Free *Free
}

// Free is a family of option keys a provisioner passes on rather than
// declares, such as postgresql.conf settings.
type Free struct {
	// What says which keys these are, with examples, for help and errors.
	What string
	// Takes reports whether key is of the family (a postgresql.conf
	// setting name); a key it does not take is an unknown option.
	Takes func(key string) bool
	// Check, when not nil, refuses a key or value of the family with an
	// error saying why (a name scalelab sets itself, a value on several
	// lines).
	Check func(key, value string) error
}

// Keys returns the declared keys, sorted.
func (o Options) Keys() []string {
	keys := make([]string, 0, len(o.Specs))
	for _, sp := range o.Specs {
		keys = append(keys, sp.Key)
	}
	sort.Strings(keys)
	return keys
}

// Spec returns the declaration of key.
func (o Options) Spec(key string) (setting.Spec, bool) {
	for _, sp := range o.Specs {
		if sp.Key == key {
			return sp, true
		}
	}
	return setting.Spec{}, false
}

// Declares reports whether p's clusters take the option key.
func Declares(p Provisioner, key string) bool {
	_, ok := p.Options().Spec(key)
	return ok
}

// Resolved is a cluster's options checked against its provisioner's
// declarations: every declared key has a value (the default unless
// given), and Free holds the free keys given, in key order.
type Resolved struct {
	*setting.Set
	Free [][2]string
}

// common are the keys that mean the same to every provisioner: never a
// free key of one that does not declare them.
var common = map[string]bool{OptNodes: true, OptReplicas: true, OptHeap: true, OptRoles: true, OptBackend: true, OptExitWithPID: true}

// ErrBadOption is wrapped by every error about a cluster option: a key the
// provisioner does not take, or a value its declaration refuses.
var ErrBadOption = errors.New("bad cluster option")

// Resolve checks spec's options against p's declarations and returns them
// typed: the Nodes, Replicas, Heap and Roles fields are the options
// nodes, replicas, heap and roles, Options holds the others. An error
// wraps ErrBadOption and names the key, what is wrong, what is allowed
// and the nearest declared key.
func Resolve(p Provisioner, spec Spec) (*Resolved, error) {
	decl := p.Options()
	r := &Resolved{Set: setting.NewSet(decl.Specs...)}
	// set sets key; a key the fields spell (field) is never a free one
	set := func(key, raw, spelled string, field bool) error {
		if decl.has(key) {
			if err := r.SetValue(key, raw); err != nil {
				return fmt.Errorf("%w: %s: %v", ErrBadOption, spelled, strings.TrimPrefix(err.Error(), setting.ErrBadValue.Error()+": "))
			}
			return nil
		}
		if decl.Free != nil && !field && !common[key] && decl.Free.Takes(key) && !decl.typo(key) {
			if decl.Free.Check != nil {
				if err := decl.Free.Check(key, raw); err != nil {
					return fmt.Errorf("%w: %s: %v", ErrBadOption, spelled, err)
				}
			}
			r.Free = append(r.Free, [2]string{key, raw})
			return nil
		}
		return decl.unknown(p.Engine(), key, spelled)
	}
	if spec.Nodes != 0 {
		if err := set(OptNodes, strconv.Itoa(spec.Nodes), fmt.Sprintf("--nodes %d", spec.Nodes), true); err != nil {
			return nil, err
		}
	}
	if spec.Replicas != 0 {
		if err := set(OptReplicas, strconv.Itoa(spec.Replicas), fmt.Sprintf("--replicas %d", spec.Replicas), true); err != nil {
			return nil, err
		}
	}
	if spec.Heap != "" {
		if err := set(OptHeap, spec.Heap, "--heap "+spec.Heap, true); err != nil {
			return nil, err
		}
	}
	if len(spec.Roles) > 0 {
		roles := strings.Join(spec.Roles, ",")
		if err := set(OptRoles, roles, "--roles "+roles, true); err != nil {
			return nil, err
		}
	}
	keys := slices.Sorted(maps.Keys(spec.Options))
	for _, k := range keys {
		if err := set(k, spec.Options[k], "--opt "+k+"="+spec.Options[k], false); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (o Options) has(key string) bool { _, ok := o.Spec(key); return ok }

// typo reports whether key is a declared key misspelt: a letter wrong,
// missing or extra, two letters swapped, or, in a key of five letters or
// more, two letters wrong (maxmemroy for maxmemory, tsl for tls).
func (o Options) typo(key string) bool {
	for _, k := range o.Keys() {
		d := setting.Distance(key, k)
		if d <= 1 || (d == 2 && (len(k) >= 5 || swapped(key, k))) {
			return true
		}
	}
	return false
}

// swapped reports whether a is b with two neighbouring letters swapped.
func swapped(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i+1 < len(a); i++ {
		if a[i] != b[i] {
			return a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
		}
	}
	return false
}

// unknown is the error about a key o does not take.
func (o Options) unknown(engine, key, spelled string) error {
	msg := fmt.Sprintf("%s: %s clusters take no option %q", spelled, engine, key)
	if n := setting.Nearest(key, o.Keys()); n != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", n)
	}
	msg += "; they take: " + strings.Join(o.Keys(), ", ")
	if o.Free != nil {
		msg += ", and " + o.Free.What
	}
	msg += fmt.Sprintf(" (scalelab list cluster %s)", engine)
	return fmt.Errorf("%w: %s", ErrBadOption, msg)
}

// NodesOption declares the nodes option: def nodes unless given, at most
// max on one machine; what says what a node is.
func NodesOption(def, maxNodes int, what string) setting.Spec {
	return setting.Spec{Key: OptNodes, Kind: setting.Int, Default: strconv.Itoa(def), Min: 1, Max: float64(maxNodes),
		Description: what}
}

// SingleNode declares the nodes option of a provisioner whose clusters
// are one server: 1, the only value allowed.
func SingleNode(engine string) setting.Spec {
	return setting.Spec{Key: OptNodes, Kind: setting.Int, Default: "1", Min: 1, Max: 1,
		Description: "servers: a " + engine + " cluster is one server"}
}

// ExitWithPIDOption declares exit_with_pid: the nodes stop when that
// process exits (0: they run until cluster down).
func ExitWithPIDOption() setting.Spec {
	return setting.Spec{Key: OptExitWithPID, Kind: setting.Int, Default: "0", Min: 0, Max: 1 << 22,
		Description: "stop the nodes when the process of this id exits (tests); 0: they run until cluster down"}
}

// ConfigFree is the Free family of a server's configuration file: names
// matching valid, except reserved ones (scalelab sets those itself, why
// says to what end), with a value on one line.
func ConfigFree(what string, valid func(string) bool, reserved []string, why string) *Free {
	res := map[string]bool{}
	for _, k := range reserved {
		res[k] = true
	}
	return &Free{What: what, Takes: valid, Check: func(key, value string) error {
		switch {
		case res[key]:
			return fmt.Errorf("scalelab sets %s itself (%s)", key, why)
		case strings.ContainsAny(value, "\r\n"):
			return errors.New("the value is on several lines")
		}
		return nil
	}}
}
