package engine

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/scalelab/scalelab/cluster"
)

func TestCredentials(t *testing.T) {
	dir := t.TempDir()
	clusterPW, err := cluster.NewSecret(filepath.Join(dir, "cluster"))
	if err != nil {
		t.Fatal(err)
	}
	filePW, err := cluster.NewSecret(filepath.Join(dir, "file"))
	if err != nil {
		t.Fatal(err)
	}
	st := &cluster.State{Name: "c1", Target: "db://cluster", SecretFile: filepath.Join(dir, "cluster")}
	t.Setenv("SCALELAB_TEST_PW", "from-env")
	for _, c := range []struct {
		name         string
		cfg          Config
		file         string
		target, want string
	}{
		{"env", Config{Target: "db://t"}, "", "db://t", "from-env"},
		{"cluster over env", Config{Cluster: st}, "", "db://cluster", clusterPW},
		{"file over cluster", Config{Cluster: st, Target: "db://t"}, filepath.Join(dir, "file"), "db://t", filePW},
	} {
		target, pw, err := Credentials(c.cfg, "x.password_file", c.file, "SCALELAB_TEST_PW")
		if err != nil || target != c.target || pw != c.want {
			t.Errorf("%s: %q %q %v", c.name, target, pw, err)
		}
	}
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, []byte("pw\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Credentials(Config{}, "x.password_file", open, "SCALELAB_TEST_PW"); !errors.Is(err, ErrConfig) {
		t.Errorf("a password file others can read: %v", err)
	}
}
