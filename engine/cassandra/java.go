package cassandra

import (
	"github.com/scalelab/scalelab/cluster/jvm"
)

// BuildCommand builds the node launcher and fetches cassandra-all and its
// dependencies from Maven Central once (`make java` runs it too).
const BuildCommand = "mvn -q -B -f java/pom.xml -pl cassandra package"

// MainClass is the launcher's main class (java/cassandra).
const MainClass = "org.scalelab.node.CassandraNode"

// JDKEnv names a JDK home to run the nodes with (Java 11 to 17).
const JDKEnv = "SCALELAB_CASSANDRA_JAVA_HOME"

// ErrNotInstalled is wrapped by errors about a missing JDK or launcher.
var ErrNotInstalled = jvm.ErrNotInstalled

// jdk is the JDK the nodes need: Cassandra 5.0 runs on Java 11 and 17.
var jdk = jvm.Requirement{Engine: "cassandra", Min: 11, Max: 17, Env: JDKEnv, Hint: "apt-get install -y openjdk-17-jdk-headless"}

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
func Classpath() (string, error) { return jvm.Classpath("cassandra", "cassandra", BuildCommand) }

// JDK returns the java binary for the nodes and its major version
// (jvm.Requirement.Find: $SCALELAB_CASSANDRA_JAVA_HOME, $JAVA_HOME, java on
// PATH, then the installed JDKs, newest first).
func JDK() (string, int, error) { return jdk.Find() }

// Installed reports whether the launcher is built and a suitable JDK
// exists; the error says what is missing and how to install it.
func Installed() error {
	if _, _, err := JDK(); err != nil {
		return err
	}
	_, err := Classpath()
	return err
}
