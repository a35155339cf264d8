// Package testenv answers, for tests, whether they run under CI: there a
// server or tool a test needs that cannot run fails the test, elsewhere it
// skips it, naming what to install. It is the one place that reads CI.
package testenv

import (
	"os"
	"testing"
)

// InCI reports whether the tests run under CI (CI=true).
func InCI() bool { return os.Getenv("CI") == "true" }

// Unavailable fails t under CI, and skips it otherwise, saying what cannot
// run here, why, and what to install.
func Unavailable(t testing.TB, what string, err error, install string) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s cannot run here: %v (%s)", what, err, install)
	}
	t.Skipf("%s cannot run here: %v (%s)", what, err, install)
}
