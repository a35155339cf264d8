package codeshape

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModuleShape checks every Go file of the module but tests (the
// ferretdb launcher, a module of its own, included).
func TestModuleShape(t *testing.T) {
	root := filepath.Join("..", "..")
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "java") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		over, err := Check(path, src)
		if err != nil {
			return err
		}
		for _, o := range over {
			t.Error(o)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 200 {
		t.Fatalf("checked %d files; want the whole module", n)
	}
}

// TestCheckFindsLongCode: a function over the limit and a file over it
// are found, so TestModuleShape can fail.
func TestCheckFindsLongCode(t *testing.T) {
	long := "package x\n\nfunc long() {\n" + strings.Repeat("\t_ = 1\n", MaxFuncLines) + "}\n\nfunc short() {}\n"
	over, err := Check("x.go", []byte(long))
	if err != nil {
		t.Fatal(err)
	}
	if len(over) != 1 || !strings.Contains(over[0], "func long is 102 lines") {
		t.Errorf("Check = %q, want func long over the limit", over)
	}
	big := "package x\n" + strings.Repeat("\n", MaxFileLines)
	if over, _ := Check("big.go", []byte(big)); len(over) != 1 || !strings.Contains(over[0], "801 lines") {
		t.Errorf("Check = %q, want the file over the limit", over)
	}
}
