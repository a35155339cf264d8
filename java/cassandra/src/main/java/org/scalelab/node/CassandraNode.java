/*
 * scalelab: starts ONE Cassandra node in this JVM (scalelab starts one JVM per
 * node, so that a node can be killed or restarted alone).
 */
package org.scalelab.node;

import org.apache.cassandra.service.CassandraDaemon;

/**
 * Starts Cassandra's daemon after an optional watchdog.
 *
 * <p>The node's configuration comes from the system properties scalelab sets
 * ({@code -Dcassandra.config=file:///.../cassandra.yaml} and others). With
 * {@code -Dscalelab.exit-with-pid=PID} the node stops (a clean
 * {@code System.exit}, running Cassandra's shutdown hooks) when process PID
 * ends: a test's nodes do not outlive the test binary.
 */
public final class CassandraNode {

    private CassandraNode() {
    }

    /**
     * Entry point.
     *
     * @param args passed to {@link CassandraDaemon#main(String[])}
     */
    public static void main(final String[] args) {
        Watchdog.start(Long.getLong("scalelab.exit-with-pid", 0L));
        CassandraDaemon.main(args);
    }
}
