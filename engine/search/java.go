package search

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// distribution describes how to launch one node of a distribution.
type distribution struct {
	engine      string
	module      string // Maven module under java/
	mainClass   string
	minJava     int
	maxJava     int    // 0: no upper bound
	cmRole      string // the cluster-manager role's name on this server
	initialCMs  string // the bootstrap setting naming the initial cluster managers
	jdkEnv      string // environment variable naming a JDK for it
	jdkDefaults []string
	jvmFlags    []string
}

var distributions = map[string]*distribution{
	OpenSearch: {
		engine: OpenSearch, module: "opensearch", mainClass: "org.scalelab.node.OpenSearchNode",
		minJava: 21, cmRole: "cluster_manager", initialCMs: "cluster.initial_cluster_manager_nodes",
		jdkEnv:      "SCALELAB_OPENSEARCH_JAVA_HOME",
		jdkDefaults: []string{"/usr/lib/jvm/temurin-25-jdk-amd64", "/usr/lib/jvm/temurin-21-jdk-amd64"},
		jvmFlags: []string{"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector",
			"-Djava.locale.providers=SPI,CLDR"},
	},
	Elasticsearch: {
		engine: Elasticsearch, module: "elasticsearch", mainClass: "org.scalelab.node.ElasticsearchNode",
		minJava: 11, maxJava: 17, cmRole: "master", initialCMs: "cluster.initial_master_nodes",
		jdkEnv:      "SCALELAB_ELASTICSEARCH_JAVA_HOME",
		jdkDefaults: []string{"/usr/lib/jvm/java-17-openjdk-amd64"},
		jvmFlags:    []string{"-Djava.locale.providers=SPI,COMPAT"},
	},
}

// commonJVMFlags are the flags of every node (after the heap), from the
// distributions' own jvm.options.
var commonJVMFlags = []string{
	"-XX:+UseG1GC", "-XX:G1ReservePercent=25", "-XX:InitiatingHeapOccupancyPercent=30", "-XX:-OmitStackTraceInFastThrow", "-XX:+ExitOnOutOfMemoryError", "-Xss1m",
	"-Djava.awt.headless=true", "-Dfile.encoding=UTF-8", "-Djna.nosys=true",
	"-Dlog4j.shutdownHookEnabled=false", "-Dlog4j2.disable.jmx=true", "-Dlog4j2.formatMsgNoLookups=true",
}

// ErrNotInstalled is wrapped by errors about a missing JDK or launcher jar.
var ErrNotInstalled = errors.New("not installed")

// JavaDir finds scalelab's java/ directory (the Maven module): from
// $SCALELAB_JAVA_DIR, beside the scalelab binary (bin/../java), or in the
// working directory or one of its parents (for tests).
func JavaDir() (string, error) {
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

// BuildCommand is the command that builds a distribution's launcher and
// fetches its jars from Maven Central (`make java` runs both).
func BuildCommand(engineName string) string {
	if engineName == OpenSearch {
		return "JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 mvn -q -B -f java/pom.xml -pl opensearch package"
	}
	return "mvn -q -B -f java/pom.xml -pl elasticsearch package"
}

// Classpath returns the launcher jar and its dependencies' classpath.
func (d *distribution) Classpath() (string, error) {
	dir, err := JavaDir()
	if err != nil {
		return "", err
	}
	target := filepath.Join(dir, d.module, "target")
	jar := filepath.Join(target, "scalelab-"+d.module+"-node.jar")
	cp, err := os.ReadFile(filepath.Join(target, "classpath.txt"))
	if _, jerr := os.Stat(jar); jerr != nil || err != nil {
		return "", fmt.Errorf("%w: the %s launcher is not built (%s missing): run `make java` or `%s` (fetches the jars from Maven Central once)",
			ErrNotInstalled, d.engine, jar, BuildCommand(d.engine))
	}
	deps := strings.TrimSpace(string(cp))
	for _, p := range strings.Split(deps, string(os.PathListSeparator)) {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: %s jar %s is missing (was ~/.m2 cleaned?): run `%s`", ErrNotInstalled, d.engine, p, BuildCommand(d.engine))
		}
	}
	return jar + string(os.PathListSeparator) + deps, nil
}

// JDK returns the java binary to run the distribution with and its major
// version: the first suitable JDK of $SCALELAB_<ENGINE>_JAVA_HOME, the
// distribution's usual locations, $JAVA_HOME and java on PATH.
func (d *distribution) JDK() (string, int, error) {
	var homes []string
	if h := os.Getenv(d.jdkEnv); h != "" {
		homes = append(homes, h)
	}
	homes = append(homes, d.jdkDefaults...)
	if h := os.Getenv("JAVA_HOME"); h != "" {
		homes = append(homes, h)
	}
	if p, err := exec.LookPath("java"); err == nil {
		if p, err = filepath.EvalSymlinks(p); err == nil {
			homes = append(homes, filepath.Dir(filepath.Dir(p)))
		}
	}
	var seen []string
	for _, h := range homes {
		bin := filepath.Join(h, "bin", "java")
		if _, err := os.Stat(bin); err != nil {
			continue
		}
		v := javaVersion(h)
		seen = append(seen, fmt.Sprintf("%s (Java %d)", h, v))
		if v >= d.minJava && (d.maxJava == 0 || v <= d.maxJava) {
			return bin, v, nil
		}
	}
	want := fmt.Sprintf("JDK %d+", d.minJava)
	hint := "install Temurin 21+ (/usr/lib/jvm/temurin-25-jdk-amd64 on the machine image)"
	if d.maxJava > 0 {
		want = fmt.Sprintf("JDK %d to %d", d.minJava, d.maxJava)
		hint = "apt-get install -y openjdk-17-jdk-headless"
	}
	found := "none found"
	if len(seen) > 0 {
		found = "found only " + strings.Join(seen, ", ")
	}
	return "", 0, fmt.Errorf("%w: %s needs %s, %s: %s, or set $%s", ErrNotInstalled, d.engine, want, found, hint, d.jdkEnv)
}

// javaVersion reads the major version from a JDK's release file (0 if
// unknown).
func javaVersion(home string) int {
	f, err := os.Open(filepath.Join(home, "release"))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "JAVA_VERSION="); ok {
			v = strings.Trim(v, `"`)
			v = strings.TrimPrefix(v, "1.") // 1.8.0 -> 8
			major, _, _ := strings.Cut(v, ".")
			n, _ := strconv.Atoi(major)
			return n
		}
	}
	return 0
}

// Installed reports whether the engine's launcher is built and a suitable
// JDK exists; the error says what is missing and how to install it.
func Installed(engineName string) error {
	d, ok := distributions[engineName]
	if !ok {
		return fmt.Errorf("search: unknown engine %q", engineName)
	}
	if _, _, err := d.JDK(); err != nil {
		return err
	}
	_, err := d.Classpath()
	return err
}
