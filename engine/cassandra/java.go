package cassandra

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/scalelab/scalelab/engine/search"
)

// BuildCommand builds the node launcher and fetches cassandra-all and its
// dependencies from Maven Central once (`make java` runs it too).
const BuildCommand = "mvn -q -B -f java/pom.xml -pl cassandra package"

// MainClass is the launcher's main class (java/cassandra).
const MainClass = "org.scalelab.node.CassandraNode"

// JDKEnv names a JDK home to run the nodes with (Java 11 to 17).
const JDKEnv = "SCALELAB_CASSANDRA_JAVA_HOME"

// ErrNotInstalled is wrapped by errors about a missing JDK or launcher.
var ErrNotInstalled = errors.New("not installed")

// jvmFlags are every node's JVM flags after the heap: Cassandra 5.0's
// server options for Java 17 (G1, module exports and opens that its
// off-heap memory, JMX-free metrics and reflection on JDK internals need),
// plus flags for a quiet start on a small machine.
var jvmFlags = []string{
	"-XX:+UseG1GC", "-XX:+ParallelRefProcEnabled", "-XX:MaxTenuringThreshold=1", "-XX:G1HeapRegionSize=4m",
	"-XX:MaxGCPauseMillis=300", "-XX:+ExitOnOutOfMemoryError", "-XX:-OmitStackTraceInFastThrow", "-Xss512k",
	"-XX:+UseStringDeduplication", "-XX:+PerfDisableSharedMem",
	"-Djava.net.preferIPv4Stack=true", "-Djdk.attach.allowAttachSelf=true", "-Dio.netty.tryReflectionSetAccessible=true",
	"-Djava.awt.headless=true", "-Dfile.encoding=UTF-8", "-Dcassandra-foreground=yes",
	"--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
	"--add-exports", "java.base/jdk.internal.ref=ALL-UNNAMED",
	"--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED",
	"--add-exports", "java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
	"--add-exports", "java.rmi/sun.rmi.registry=ALL-UNNAMED",
	"--add-exports", "java.rmi/sun.rmi.server=ALL-UNNAMED",
	"--add-exports", "java.sql/java.sql=ALL-UNNAMED",
	"--add-opens", "java.base/java.lang.module=ALL-UNNAMED",
	"--add-opens", "java.base/jdk.internal.loader=ALL-UNNAMED",
	"--add-opens", "java.base/jdk.internal.ref=ALL-UNNAMED",
	"--add-opens", "java.base/jdk.internal.reflect=ALL-UNNAMED",
	"--add-opens", "java.base/jdk.internal.math=ALL-UNNAMED",
	"--add-opens", "java.base/jdk.internal.module=ALL-UNNAMED",
	"--add-opens", "java.base/jdk.internal.util.jar=ALL-UNNAMED",
	"--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED",
	"--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
	"--add-opens", "java.base/java.io=ALL-UNNAMED",
	"--add-opens", "java.base/java.nio=ALL-UNNAMED",
	"--add-opens", "java.base/java.util.concurrent=ALL-UNNAMED",
	"--add-opens", "java.base/java.util=ALL-UNNAMED",
	"--add-opens", "java.base/java.util.concurrent.atomic=ALL-UNNAMED",
	"--add-opens", "java.base/java.lang=ALL-UNNAMED",
	"--add-opens", "java.base/java.math=ALL-UNNAMED",
	"--add-opens", "java.base/java.lang.reflect=ALL-UNNAMED",
	"--add-opens", "java.base/java.net=ALL-UNNAMED",
}

// startFlags speed up the start of a fresh local ring: no wait for gossip
// to settle, a 1 s ring delay, and the default superuser created at once
// (scalelab then replaces it).
var startFlags = []string{
	"-Dcassandra.skip_wait_for_gossip_to_settle=0",
	"-Dcassandra.ring_delay_ms=1000",
	"-Dcassandra.superuser_setup_delay_ms=0",
}

// Classpath returns the launcher jar and its dependencies' classpath.
func Classpath() (string, error) {
	dir, err := search.JavaDir()
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNotInstalled, err)
	}
	target := filepath.Join(dir, "cassandra", "target")
	jar := filepath.Join(target, "scalelab-cassandra-node.jar")
	cp, err := os.ReadFile(filepath.Join(target, "classpath.txt"))
	if _, jerr := os.Stat(jar); jerr != nil || err != nil {
		return "", fmt.Errorf("%w: the cassandra launcher is not built (%s missing): run `make java` or `%s` (fetches the jars from Maven Central once)",
			ErrNotInstalled, jar, BuildCommand)
	}
	deps := strings.TrimSpace(string(cp))
	for _, p := range strings.Split(deps, string(os.PathListSeparator)) {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: cassandra jar %s is missing (was ~/.m2 cleaned?): run `%s`", ErrNotInstalled, p, BuildCommand)
		}
	}
	return jar + string(os.PathListSeparator) + deps, nil
}

// JDK returns the java binary for the nodes and its major version: the
// first JDK 11 to 17 of $SCALELAB_CASSANDRA_JAVA_HOME, Debian's OpenJDK 17,
// $JAVA_HOME and java on PATH (Cassandra 5.0 runs on Java 11 and 17).
func JDK() (string, int, error) {
	var homes []string
	if h := os.Getenv(JDKEnv); h != "" {
		homes = append(homes, h)
	}
	homes = append(homes, "/usr/lib/jvm/java-17-openjdk-amd64", "/usr/lib/jvm/java-17-openjdk-arm64")
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
		if v >= 11 && v <= 17 {
			return bin, v, nil
		}
	}
	found := "none found"
	if len(seen) > 0 {
		found = "found only " + strings.Join(seen, ", ")
	}
	return "", 0, fmt.Errorf("%w: cassandra needs JDK 11 to 17, %s: apt-get install -y openjdk-17-jdk-headless, or set $%s", ErrNotInstalled, found, JDKEnv)
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
			v = strings.TrimPrefix(strings.Trim(v, `"`), "1.")
			major, _, _ := strings.Cut(v, ".")
			n, _ := strconv.Atoi(major)
			return n
		}
	}
	return 0
}

// Installed reports whether the launcher is built and a suitable JDK
// exists; the error says what is missing and how to install it.
func Installed() error {
	if _, _, err := JDK(); err != nil {
		return err
	}
	_, err := Classpath()
	return err
}
