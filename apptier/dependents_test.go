package apptier

import (
	"strings"
	"testing"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/cluster/clustertest"
)

func TestDependentsAndCheckDown(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	clustertest.Saved(t, &cluster.State{Name: "pg1", Engine: "postgres", Params: map[string]string{}})
	clustertest.Saved(t, &cluster.State{Name: "r1", Engine: "redis", Params: map[string]string{}})
	clustertest.Saved(t, &cluster.State{Name: "web2", Engine: Name, Params: map[string]string{ParamStore: "pg1", ParamCache: "r1"}})
	clustertest.Saved(t, &cluster.State{Name: "web1", Engine: Name, Params: map[string]string{ParamStore: "pg1"}})
	clustertest.Saved(t, &cluster.State{Name: "lone", Engine: Name, Params: map[string]string{ParamStoreTarget: "/x.db"}})

	ds, err := Dependents("pg1")
	if err != nil || len(ds) != 2 || ds[0] != (Dependent{"web1", "store"}) || ds[1] != (Dependent{"web2", "store"}) {
		t.Fatalf("Dependents(pg1) = %v, %v", ds, err)
	}
	_, err = CheckDown("pg1", false)
	if err == nil || !strings.Contains(err.Error(), "app cluster web1 (its store), app cluster web2 (its store)") ||
		!strings.Contains(err.Error(), "scalelab cluster down web1") || !strings.Contains(err.Error(), "--force") {
		t.Errorf("CheckDown(pg1) = %v", err)
	}
	if ds, err := CheckDown("pg1", true); err != nil || len(ds) != 2 {
		t.Errorf("CheckDown(pg1, force) = %v, %v", ds, err)
	}
	if _, err := CheckDown("r1", false); err == nil || !strings.Contains(err.Error(), "app cluster web2 (its cache)") {
		t.Errorf("CheckDown(r1) = %v", err)
	}
	for _, free := range []string{"web1", "lone"} {
		if ds, err := CheckDown(free, false); err != nil || len(ds) != 0 {
			t.Errorf("CheckDown(%s) = %v, %v", free, ds, err)
		}
	}
}
