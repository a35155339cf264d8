package apptier

import (
	"fmt"
	"sort"

	"github.com/scalelab/scalelab/cluster"
)

// Dependent is an app cluster that uses another cluster.
type Dependent struct {
	Name string // the app cluster
	As   string // "store" or "cache"
}

// String is "app cluster web1 (its store)".
func (d Dependent) String() string { return fmt.Sprintf("app cluster %s (its %s)", d.Name, d.As) }

// Dependents lists the app clusters whose servers use the cluster named
// name as their store or their cache, by name. Clusters whose state
// cannot be read are skipped.
func Dependents(name string) ([]Dependent, error) {
	names, err := cluster.List()
	if err != nil {
		return nil, err
	}
	var ds []Dependent
	for _, n := range names {
		if n == name {
			continue
		}
		st, err := cluster.Load(n)
		if err != nil || st.Engine != Name {
			continue
		}
		if st.Params[ParamStore] == name {
			ds = append(ds, Dependent{Name: n, As: "store"})
		}
		if st.Params[ParamCache] == name {
			ds = append(ds, Dependent{Name: n, As: "cache"})
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].Name < ds[j].Name })
	return ds, nil
}

// CheckDown refuses to stop the cluster named name while app clusters use
// it (their servers would fail every request), naming them and what to do;
// force lets it go and returns the dependents for a warning.
func CheckDown(name string, force bool) ([]Dependent, error) {
	ds, err := Dependents(name)
	if err != nil || len(ds) == 0 {
		return ds, err
	}
	if force {
		return ds, nil
	}
	msg := fmt.Sprintf("cluster %s is used by", name)
	for i, d := range ds {
		if i > 0 {
			msg += ","
		}
		msg += " " + d.String()
	}
	msg += "; stop that first (scalelab cluster down " + ds[0].Name + "), or add --force to stop it anyway (the app servers' requests then fail)"
	return ds, fmt.Errorf("%s", msg)
}
