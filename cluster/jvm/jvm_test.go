package jvm

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/cluster/jvm/jvmtest"
)

// A JDK is found by the version its release file states, wherever it is
// installed: the newest that fits among the scanned homes, or the one an
// environment variable names.
func TestFindByVersion(t *testing.T) {
	root := t.TempDir()
	jvmtest.FakeJDK(t, root, "a-jdk", "17.0.15")
	jvmtest.FakeJDK(t, root, "b-jdk", "21.0.2")
	jvmtest.FakeJDK(t, root, "c-jdk", "25.0.1")
	jvmtest.FakeJDK(t, root, "old", "1.8.0_402")
	t.Setenv("PATH", "")
	t.Setenv("JAVA_HOME", "")
	t.Setenv("TEST_JDK", "")
	for _, tc := range []struct {
		min, max int
		want     string
		version  int
	}{
		{21, 0, "c-jdk", 25},
		{11, 17, "a-jdk", 17},
		{21, 21, "b-jdk", 21},
		{8, 8, "old", 8},
	} {
		r := Requirement{Engine: "x", Min: tc.min, Max: tc.max, Env: "TEST_JDK", Roots: []string{root}}
		bin, v, err := r.Find()
		if err != nil || v != tc.version || bin != filepath.Join(root, tc.want, "bin", "java") {
			t.Errorf("%d..%d: %s %d %v, want %s (Java %d)", tc.min, tc.max, bin, v, err, tc.want, tc.version)
		}
	}
	named := jvmtest.FakeJDK(t, t.TempDir(), "mine", "21.0.9")
	t.Setenv("TEST_JDK", named)
	if bin, _, err := (Requirement{Min: 21, Env: "TEST_JDK", Roots: []string{root}}).Find(); err != nil || bin != filepath.Join(named, "bin", "java") {
		t.Errorf("the JDK the environment names comes first: %s %v", bin, err)
	}
	_, _, err := Requirement{Engine: "opensearch", Min: 26, Env: "TEST_JDK", Hint: "install a JDK 26", Roots: []string{root}}.Find()
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "opensearch needs JDK 26+") || !strings.Contains(err.Error(), "(Java 25)") ||
		!strings.Contains(err.Error(), "install a JDK 26") || !strings.Contains(err.Error(), "$TEST_JDK") {
		t.Errorf("no suitable JDK: %v", err)
	}
}
