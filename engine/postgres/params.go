package postgres

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/setting"
)

// withServerParams makes free, the postgresql.conf settings --opt takes,
// refuse a name the server does not know, before initdb runs: the names
// are the server's own list (`postgres --describe-config`, its first
// column). A name with a dot is an extension's placeholder, which the
// server takes once the extension is loaded, and is not checked; without
// the server binaries the names are not checked here (Up then says how
// to install them).
func withServerParams(free *cluster.Free) *cluster.Free {
	check := free.Check
	free.Check = func(key, value string) error {
		if check != nil {
			if err := check(key, value); err != nil {
				return err
			}
		}
		if strings.Contains(key, ".") {
			return nil
		}
		names, bin, err := serverParams()
		if err != nil || slices.Contains(names, key) {
			return nil
		}
		msg := fmt.Sprintf("PostgreSQL has no server parameter %q", key)
		if n := setting.Nearest(key, names); n != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", n)
		}
		return fmt.Errorf("%s; `%s --describe-config` lists the %d it has", msg, filepath.Join(bin, "postgres"), len(names))
	}
	return free
}

// params caches the server's parameter names by binaries' directory.
var params struct {
	sync.Mutex
	names map[string][]string
}

// serverParams returns the names of the server parameters of the
// PostgreSQL binaries the provisioner uses (BinDir), and that directory.
func serverParams() (names []string, bin string, err error) {
	if bin, err = BinDir(); err != nil {
		return nil, "", err
	}
	params.Lock()
	defer params.Unlock()
	if n, ok := params.names[bin]; ok {
		return n, bin, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(bin, "postgres"), "--describe-config").Output()
	if err != nil {
		return nil, bin, fmt.Errorf("postgres --describe-config: %w", err)
	}
	for line := range bytes.Lines(out) {
		if name, _, ok := bytes.Cut(line, []byte("\t")); ok && len(name) > 0 {
			names = append(names, string(name))
		}
	}
	if len(names) == 0 {
		return nil, bin, fmt.Errorf("postgres --describe-config listed no parameter")
	}
	if params.names == nil {
		params.names = map[string][]string{}
	}
	params.names[bin] = names
	return names, bin, nil
}
