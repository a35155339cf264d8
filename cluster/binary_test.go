package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindBinary: the file the variable names, else PATH, else the
// directories given; a miss (or a variable naming a directory) wraps the
// caller's error and gives its hint.
func TestFindBinary(t *testing.T) {
	errMissing := errors.New("srv not found")
	dir := t.TempDir()
	bin := filepath.Join(dir, "srv")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	t.Setenv("SRV_BIN", "")
	if p, err := FindBinary(errMissing, "SRV_BIN", "srv", "apt-get install srv", dir); err != nil || p != bin {
		t.Errorf("from the directories: %q, %v", p, err)
	}
	if _, err := FindBinary(errMissing, "SRV_BIN", "srv", "apt-get install srv"); !errors.Is(err, errMissing) || !strings.Contains(err.Error(), "apt-get install srv") {
		t.Errorf("a miss: %v", err)
	}
	t.Setenv("PATH", dir)
	if p, err := FindBinary(errMissing, "SRV_BIN", "srv", "hint"); err != nil || p != bin {
		t.Errorf("on PATH: %q, %v", p, err)
	}
	other := filepath.Join(t.TempDir(), "mine")
	if err := os.WriteFile(other, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SRV_BIN", other)
	if p, err := FindBinary(errMissing, "SRV_BIN", "srv", "hint"); err != nil || p != other {
		t.Errorf("named by the variable: %q, %v", p, err)
	}
	t.Setenv("SRV_BIN", dir)
	if _, err := FindBinary(errMissing, "SRV_BIN", "srv", "hint"); !errors.Is(err, errMissing) || !strings.Contains(err.Error(), "not a file") {
		t.Errorf("a variable naming a directory: %v", err)
	}
}
