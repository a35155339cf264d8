/*
 * scalelab: the watchdog every node launcher starts, so that a test's nodes
 * do not outlive the test binary.
 */
package org.scalelab.node;

/** Exits the JVM once a given process has ended. */
final class Watchdog {

    private Watchdog() {
    }

    /**
     * Starts a daemon thread that exits the JVM (running the shutdown hooks,
     * which close the node) once process {@code pid} has ended; does nothing
     * for {@code pid <= 0}.
     *
     * @param pid the process to watch
     */
    static void start(final long pid) {
        if (pid <= 0) {
            return;
        }
        final Thread t = new Thread(() -> {
            while (true) {
                final boolean alive = ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
                if (!alive) {
                    System.err.println("scalelab-node: process " + pid + " ended, stopping");
                    System.exit(0);
                }
                try {
                    Thread.sleep(1000);
                } catch (final InterruptedException e) {
                    return;
                }
            }
        }, "scalelab-node-watchdog");
        t.setDaemon(true);
        t.start();
    }
}
