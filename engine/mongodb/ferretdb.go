package mongodb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/setting"
)

// FerretDB is the name of the local clusters `scalelab cluster up
// ferretdb` starts: a FerretDB v1 server that the mongodb engine uses.
const FerretDB = "ferretdb"

// FerretDBBinary is the launcher's file name (bin/, beside scalelab).
const FerretDBBinary = "scalelab-ferretdb"

// ErrNoFerretDB is wrapped by errors about a launcher that is neither
// built nor buildable here.
var ErrNoFerretDB = errors.New("the FerretDB launcher is not built")

const ferretModule = "module github.com/scalelab/scalelab/ferretdb"

func init() { cluster.Register(ferretProvisioner{}) }

// ferretProvisioner starts one FerretDB server on loopback with the
// SQLite backend (no authentication: FerretDB v1 has none on it), or with
// the PostgreSQL backend over a local PostgreSQL server of its own, whose
// user and password the clients give (PLAIN authentication, passed
// through to PostgreSQL).
type ferretProvisioner struct{}

// Engine names the provisioner: ferretdb.
func (ferretProvisioner) Engine() string { return FerretDB }

// Serves names the engine that uses these clusters.
func (ferretProvisioner) Serves() string { return Name }

// Options declares what ferretdb clusters take: one server and its
// storage backend.
func (ferretProvisioner) Options() cluster.Options {
	return cluster.Options{Specs: []setting.Spec{
		cluster.SingleNode(FerretDB),
		{Key: cluster.OptBackend, Kind: setting.Enum, Default: "sqlite", Allowed: []string{"sqlite", "postgres", "postgresql"},
			Description: "where FerretDB keeps the data: SQLite files, or a PostgreSQL server it starts (PLAIN authentication)"},
		cluster.ExitWithPIDOption(),
	}}
}

// Up starts the server (and its PostgreSQL with backend=postgresql).
func (ferretProvisioner) Up(ctx context.Context, spec cluster.Spec, st *cluster.State) error {
	opts, err := cluster.Resolve(ferretProvisioner{}, spec)
	if err != nil {
		return err
	}
	backend := opts.Get(cluster.OptBackend).String()
	if backend == "postgres" {
		backend = "postgresql"
	}
	bin, err := FerretDBPath(ctx)
	if err != nil {
		return err
	}
	host := "127.0.0.1"
	port, err := cluster.FreePort(host)
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	cmd := []string{bin, "--listen", addr, "--backend", backend}
	if pid := opts.Get(cluster.OptExitWithPID).Int(); pid != 0 {
		cmd = append(cmd, "--exit-with-pid", strconv.FormatInt(pid, 10))
	}
	st.Params["backend"] = backend
	st.Target = "mongodb://" + addr + "/scalelab"
	st.Auth = "none: FerretDB v1 has no authentication on its SQLite backend (use --backend postgres for PLAIN authentication against PostgreSQL)"
	if backend == "postgresql" {
		if postgresBackend == nil {
			return fmt.Errorf("%w: ferretdb: the postgresql backend is not linked into this program (package stack/ferretdb)", cluster.ErrBadOption)
		}
		pgURL, user, err := postgresBackend(ctx, st)
		if err != nil {
			return err
		}
		cmd = append(cmd, "--postgresql-url", pgURL)
		st.Target = "mongodb://" + user + "@" + addr + "/scalelab?authMechanism=PLAIN"
		st.Auth = "PLAIN: FerretDB passes the user and password (in the secret file) through to its PostgreSQL backend; use TLS in production, PLAIN sends the password in the clear"
	} else {
		cmd = append(cmd, "--dir", filepath.Join(st.Dir, "data"))
	}
	node := cluster.Node{Name: "node1", Role: "ferretdb", Host: host, Port: port, Ports: map[string]int{"mongodb": port},
		DataDir: filepath.Join(st.Dir, "data"), LogFile: filepath.Join(st.Dir, "ferretdb.log"), Cmd: cmd}
	if _, err := st.Launch(node, st.Dir); err != nil {
		return fmt.Errorf("ferretdb: %w", err)
	}
	if err := cluster.WaitNodes(ctx, st, "ferretdb at "+addr, 50*time.Millisecond, func() bool { return cluster.Listening(addr) }); err != nil {
		return fmt.Errorf("ferretdb: %w", err)
	}
	st.Params[cluster.ParamVersion] = "FerretDB " + ferretVersion
	return nil
}

// ferretVersion is the FerretDB version the launcher module pins.
const ferretVersion = "v1.24.2"

// PostgresBackend starts the PostgreSQL server that a ferretdb cluster
// with the postgresql backend keeps its data in (in st.Dir, its nodes
// added to st's, with st's user and secret file) and returns the URL
// FerretDB connects to (no password: the clients' is passed through) and
// the user clients log in as.
type PostgresBackend func(ctx context.Context, st *cluster.State) (url, user string, err error)

var postgresBackend PostgresBackend

// RegisterPostgresBackend sets how the postgresql backend's server is
// started. The wiring of FerretDB to the postgres engine's clusters lives
// outside this package (stack/ferretdb), so that no engine imports
// another; the command line links it in.
func RegisterPostgresBackend(b PostgresBackend) { postgresBackend = b }

// Status reports whether each process is alive and listening.
func (ferretProvisioner) Status(_ context.Context, st *cluster.State) ([]cluster.NodeStatus, error) {
	out := make([]cluster.NodeStatus, 0, len(st.Nodes))
	for _, n := range st.Nodes {
		ns := cluster.NodeStatus{Node: n, Alive: cluster.Alive(n.PID)}
		ns.Detail = map[string]string{"listening": strconv.FormatBool(cluster.Listening(net.JoinHostPort(n.Host, strconv.Itoa(n.Port))))}
		out = append(out, ns)
	}
	return out, nil
}

// Health is green when every process runs: FerretDB and, with the
// postgresql backend, the PostgreSQL server it keeps its data in (neither
// has a copy elsewhere). Red when FerretDB runs without its backend (no
// data is served), unreachable when FerretDB itself is gone.
func (ferretProvisioner) Health(_ context.Context, st *cluster.State) (cluster.Health, error) {
	h := cluster.Health{Status: cluster.Green, Of: len(st.Nodes), Detail: map[string]string{}}
	for _, n := range st.Nodes {
		if cluster.Alive(n.PID) {
			h.Nodes++
			continue
		}
		h.Detail[n.Name] = "down"
		if n.Role == FerretDB || n.Role == "" {
			h.Status = cluster.Unreachable
		} else if h.Status == cluster.Green {
			h.Status = cluster.Red
		}
	}
	return h, nil
}

// FerretDBPath finds the FerretDB launcher: $SCALELAB_FERRETDB, beside the
// scalelab binary, or bin/ of the source tree (the working directory or a
// parent), building it there from the ferretdb module when it is missing
// (`make ferretdb` does the same; the Go module proxy serves FerretDB).
func FerretDBPath(ctx context.Context) (string, error) {
	if p := os.Getenv("SCALELAB_FERRETDB"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: $SCALELAB_FERRETDB: %w", ErrNoFerretDB, err)
		}
		return p, nil
	}
	var roots []string
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			if p := filepath.Join(filepath.Dir(exe), FerretDBBinary); isFile(p) {
				return p, nil
			}
			roots = append(roots, filepath.Dir(filepath.Dir(exe)))
		}
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			roots = append(roots, d)
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	for _, root := range roots {
		b, err := os.ReadFile(filepath.Join(root, "ferretdb", "go.mod"))
		if err != nil || !strings.Contains(string(b), ferretModule) {
			continue
		}
		bin := filepath.Join(root, "bin", FerretDBBinary)
		if isFile(bin) {
			return bin, nil
		}
		return bin, buildFerretDB(ctx, filepath.Join(root, "ferretdb"), bin)
	}
	return "", fmt.Errorf("%w: run `make ferretdb` in scalelab's source tree, or set $SCALELAB_FERRETDB to a built launcher", ErrNoFerretDB)
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// buildFerretDB builds the launcher of module dir into bin, under a lock
// so that concurrent callers build it once.
func buildFerretDB(ctx context.Context, dir, bin string) error {
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return fmt.Errorf("build ferretdb: %w", err)
	}
	lock, err := os.OpenFile(bin+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("build ferretdb: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("build ferretdb: lock: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if isFile(bin) {
		return nil
	}
	fmt.Fprintf(os.Stderr, "building the FerretDB launcher (once; the Go module proxy serves FerretDB %s) ...\n", ferretVersion)
	tmp := bin + ".tmp"
	cmd := exec.CommandContext(ctx, "go", "build", "-o", tmp, ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: go build in %s: %w\n%s", ErrNoFerretDB, dir, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return fmt.Errorf("build ferretdb: %w", err)
	}
	return nil
}
