package search

import (
	"fmt"

	"github.com/scalelab/scalelab/cluster/jvm"
)

// distribution describes how to launch one node of a distribution.
type distribution struct {
	engine     string
	module     string // Maven module under java/
	mainClass  string
	cmRole     string // the cluster-manager role's name on this server
	initialCMs string // the bootstrap setting naming the initial cluster managers
	jdk        jvm.Requirement
	jvmFlags   []string
}

var distributions = map[string]*distribution{
	OpenSearch: {
		engine: OpenSearch, module: "opensearch", mainClass: "org.scalelab.node.OpenSearchNode",
		cmRole: "cluster_manager", initialCMs: "cluster.initial_cluster_manager_nodes",
		jdk: jvm.Requirement{Engine: OpenSearch, Min: 21, Env: "SCALELAB_OPENSEARCH_JAVA_HOME",
			Hint: "install a JDK 21 or newer (for example Temurin 21 or 25)"},
		jvmFlags: []string{"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector",
			"-Djava.locale.providers=SPI,CLDR"},
	},
	Elasticsearch: {
		engine: Elasticsearch, module: "elasticsearch", mainClass: "org.scalelab.node.ElasticsearchNode",
		cmRole: "master", initialCMs: "cluster.initial_master_nodes",
		jdk: jvm.Requirement{Engine: Elasticsearch, Min: 11, Max: 17, Env: "SCALELAB_ELASTICSEARCH_JAVA_HOME",
			Hint: "apt-get install -y openjdk-17-jdk-headless"},
		jvmFlags: []string{"-Djava.locale.providers=SPI,COMPAT"},
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
var ErrNotInstalled = jvm.ErrNotInstalled

// BuildCommand is the command that builds a distribution's launcher and
// fetches its jars from Maven Central (`make java` runs both); OpenSearch's
// needs a JDK 21+ as JAVA_HOME.
func BuildCommand(engineName string) string {
	if engineName == OpenSearch {
		return "JAVA_HOME=/path/to/jdk-21-or-newer mvn -q -B -f java/pom.xml -pl opensearch package"
	}
	return "mvn -q -B -f java/pom.xml -pl elasticsearch package"
}

// Classpath returns the launcher jar and its dependencies' classpath.
func (d *distribution) Classpath() (string, error) {
	return jvm.Classpath(d.module, d.engine, BuildCommand(d.engine))
}

// JDK returns the java binary to run the distribution with and its major
// version (jvm.Requirement.Find: $SCALELAB_<ENGINE>_JAVA_HOME, $JAVA_HOME,
// java on PATH, then the installed JDKs, newest first).
func (d *distribution) JDK() (string, int, error) { return d.jdk.Find() }

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
