// Package ferretdb wires the ferretdb clusters of the mongodb engine to
// the postgres engine's: a ferretdb cluster with the postgresql backend
// keeps its data in a PostgreSQL server that `cluster up` starts with the
// postgres provisioner. It lives above the engines so that no engine
// imports another; the command line imports it for its side effect.
package ferretdb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine/mongodb"
	"github.com/scalelab/scalelab/engine/postgres"
)

func init() { mongodb.RegisterPostgresBackend(startPostgres) }

// startPostgres starts the PostgreSQL server of the postgresql backend in
// st.Dir/postgres and returns the URL FerretDB connects to (no password:
// the clients' is used) and the user clients log in as.
func startPostgres(ctx context.Context, st *cluster.State) (url, user string, err error) {
	pst := &cluster.State{Name: st.Name + "-pg", Engine: postgres.Name, Created: st.Created, Dir: filepath.Join(st.Dir, "postgres"), Params: map[string]string{}}
	if err := os.MkdirAll(pst.Dir, 0o700); err != nil {
		return "", "", fmt.Errorf("ferretdb postgres backend: %w", err)
	}
	err = (postgres.Provisioner{}).Up(ctx, cluster.Spec{Engine: postgres.Name, Name: pst.Name, Options: map[string]string{}}, pst)
	st.Nodes = append(st.Nodes, pst.Nodes...)
	if err != nil {
		return "", "", fmt.Errorf("ferretdb postgres backend: %w", err)
	}
	for i := range st.Nodes {
		// pg1, not the backend cluster's node1: FerretDB's own node is
		// node1, and a fault names one node (--fault kill:pg1)
		st.Nodes[i].Role, st.Nodes[i].Name = "postgres", "pg"+strconv.Itoa(i+1)
	}
	st.User, st.SecretFile = pst.User, pst.SecretFile
	pg := pst.Nodes[0]
	return fmt.Sprintf("postgres://%s:%d/%s", pg.Host, pg.Port, postgres.ClusterDB), postgres.ClusterUser, nil
}
