// Package jvm finds what the Java node launchers (OpenSearch, Elasticsearch
// and Cassandra nodes, one JVM each) need: a JDK of a suitable version,
// recognised by its release file and never by a fixed path, and the
// launcher jars that the java/ Maven module builds.
package jvm

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ErrNotInstalled is wrapped by errors about a missing JDK or launcher jar.
var ErrNotInstalled = errors.New("not installed")

// DefaultRoots are the directories whose subdirectories are looked at for
// JDK homes: where Debian's packages, the Temurin packages and most
// tarball installs put them.
var DefaultRoots = []string{"/usr/lib/jvm", "/usr/java", "/opt/java", "/opt"}

// Requirement says which JDK a launcher needs.
type Requirement struct {
	Engine   string   // named in errors
	Min, Max int      // major versions; Max 0 means no upper bound
	Env      string   // an environment variable naming a JDK home to use
	Hint     string   // how to install a suitable JDK
	Roots    []string // directories to scan for JDK homes; nil means DefaultRoots
}

// Find returns the java binary of the first suitable JDK and its major
// version. It looks at $Env, $JAVA_HOME, the java on PATH, then every JDK
// home under the roots, newest first. The error lists what it found and
// says how to install or name a suitable JDK.
func (r Requirement) Find() (string, int, error) {
	var homes []string
	for _, env := range []string{r.Env, "JAVA_HOME"} {
		if env != "" {
			if h := os.Getenv(env); h != "" {
				homes = append(homes, h)
			}
		}
	}
	if p, err := exec.LookPath("java"); err == nil {
		if p, err = filepath.EvalSymlinks(p); err == nil {
			homes = append(homes, filepath.Dir(filepath.Dir(p)))
		}
	}
	roots := r.Roots
	if roots == nil {
		roots = DefaultRoots
	}
	homes = append(homes, scan(roots)...)
	var seen []string
	done := map[string]bool{}
	for _, h := range homes {
		if done[h] {
			continue
		}
		done[h] = true
		if _, err := os.Stat(filepath.Join(h, "bin", "java")); err != nil {
			continue
		}
		v := Version(h)
		seen = append(seen, fmt.Sprintf("%s (Java %d)", h, v))
		if r.fits(v) {
			return filepath.Join(h, "bin", "java"), v, nil
		}
	}
	want := fmt.Sprintf("JDK %d+", r.Min)
	if r.Max > 0 {
		want = fmt.Sprintf("JDK %d to %d", r.Min, r.Max)
	}
	found := "none found"
	if len(seen) > 0 {
		found = "found only " + strings.Join(seen, ", ")
	}
	return "", 0, fmt.Errorf("%w: %s needs %s, %s: %s, or set $%s to a JDK home", ErrNotInstalled, r.Engine, want, found, r.Hint, r.Env)
}

func (r Requirement) fits(v int) bool { return v >= r.Min && (r.Max == 0 || v <= r.Max) }

// scan lists the JDK homes directly under roots (directories with
// bin/java), newest version first.
func scan(roots []string) []string {
	type home struct {
		dir string
		v   int
	}
	var found []home
	for _, root := range roots {
		entries, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		for _, e := range entries {
			dir := filepath.Join(root, e.Name())
			if _, err := os.Stat(filepath.Join(dir, "bin", "java")); err == nil {
				found = append(found, home{dir, Version(dir)})
			}
		}
	}
	slices.SortStableFunc(found, func(a, b home) int { return cmp.Compare(b.v, a.v) })
	out := make([]string, len(found))
	for i, h := range found {
		out[i] = h.dir
	}
	return out
}

// Version reads the major version from a JDK home's release file (0 when
// unknown).
func Version(home string) int {
	f, err := os.Open(filepath.Join(home, "release"))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "JAVA_VERSION="); ok {
			v = strings.TrimPrefix(strings.Trim(v, `"`), "1.") // 1.8.0 is Java 8
			major, _, _ := strings.Cut(v, ".")
			n, _ := strconv.Atoi(major)
			return n
		}
	}
	return 0
}

// Dir finds scalelab's java/ directory (the Maven module): from
// $SCALELAB_JAVA_DIR, beside the scalelab binary (bin/../java), or in the
// working directory or one of its parents (for tests).
func Dir() (string, error) {
	isOurs := func(dir string) bool {
		b, err := os.ReadFile(filepath.Join(dir, "pom.xml"))
		return err == nil && strings.Contains(string(b), "<artifactId>scalelab-java</artifactId>")
	}
	if d := os.Getenv("SCALELAB_JAVA_DIR"); d != "" {
		if !isOurs(d) {
			return "", fmt.Errorf("%w: $SCALELAB_JAVA_DIR=%s holds no scalelab java/pom.xml", ErrNotInstalled, d)
		}
		return d, nil
	}
	var tried []string
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			d := filepath.Join(filepath.Dir(filepath.Dir(exe)), "java")
			if isOurs(d) {
				return d, nil
			}
			tried = append(tried, d)
		}
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if isOurs(filepath.Join(d, "java")) {
				return filepath.Join(d, "java"), nil
			}
			tried = append(tried, filepath.Join(d, "java"))
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", fmt.Errorf("%w: scalelab's java/ directory not found (looked in %s); set $SCALELAB_JAVA_DIR", ErrNotInstalled, strings.Join(tried, ", "))
}

// Classpath returns the launcher jar of a java/ module and its
// dependencies' classpath (target/classpath.txt, written by the build);
// build is the command that builds it, named in the errors.
func Classpath(module, engine, build string) (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	target := filepath.Join(dir, module, "target")
	jar := filepath.Join(target, "scalelab-"+module+"-node.jar")
	cp, err := os.ReadFile(filepath.Join(target, "classpath.txt"))
	if _, jerr := os.Stat(jar); jerr != nil || err != nil {
		return "", fmt.Errorf("%w: the %s launcher is not built (%s missing): run `make java` or `%s` (fetches the jars from Maven Central once)",
			ErrNotInstalled, engine, jar, build)
	}
	deps := strings.TrimSpace(string(cp))
	for _, p := range strings.Split(deps, string(os.PathListSeparator)) {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: %s jar %s is missing (was ~/.m2 cleaned?): run `%s`", ErrNotInstalled, engine, p, build)
		}
	}
	return jar + string(os.PathListSeparator) + deps, nil
}
