// Package jvmtest makes stand-in JDK homes for the tests of how a JDK is
// found (cluster/jvm, and the distributions' requirements of the engines
// that run JVM nodes).
package jvmtest

import (
	"os"
	"path/filepath"
	"testing"
)

// FakeJDK makes a JDK home named name under root: a bin/java that does
// nothing and a release file that states version. It returns the home.
func FakeJDK(t testing.TB, root, name, version string) string {
	t.Helper()
	home := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Join(home, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "bin", "java"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "release"), []byte(`JAVA_VERSION="`+version+`"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}
