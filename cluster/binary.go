package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// FindBinary finds a server's binary: the file $env names when set, else
// name on PATH, else name in each of dirs (Debian's /usr/bin, /usr/sbin:
// PATH may lack them). A miss wraps notFound and ends with hint, which
// says how to get the server.
func FindBinary(notFound error, env, name, hint string, dirs ...string) (string, error) {
	if p := os.Getenv(env); p != "" {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() {
			return "", fmt.Errorf("%w: $%s names %s, which is not a file; %s", notFound, env, p, hint)
		}
		return p, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %s", notFound, hint)
}
