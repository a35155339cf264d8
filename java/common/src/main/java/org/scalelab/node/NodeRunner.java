/*
 * scalelab: what the search-engine node launchers share, whatever the
 * distribution's own classes.
 */
package org.scalelab.node;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/** Runs one node: classpath plugins, start, clean close on SIGTERM. */
final class NodeRunner {

    /** A step of a node's life (start, close) that may fail. */
    @FunctionalInterface
    interface Step {
        /**
         * Runs the step.
         *
         * @throws Exception when it fails
         */
        void run() throws Exception;
    }

    private NodeRunner() {
    }

    /**
     * Loads the modules of a distribution that are on the classpath as
     * plugin classes; a missing one is skipped with a note.
     *
     * @param <T> the distribution's plugin type
     * @param modules class names
     * @param type the distribution's plugin class
     * @return the classes found
     */
    static <T> List<Class<? extends T>> plugins(final String[] modules, final Class<T> type) {
        final List<Class<? extends T>> out = new ArrayList<>();
        for (final String m : modules) {
            try {
                out.add(Class.forName(m).asSubclass(type));
            } catch (final ClassNotFoundException e) {
                System.err.println("scalelab-node: module " + m + " not on the classpath, skipped");
            }
        }
        return out;
    }

    /**
     * Starts the node and runs until the JVM gets SIGTERM (or the watched
     * process ends), then closes it cleanly (waiting up to 30 seconds for it
     * to be closed) and deletes its home when asked. A node that fails to
     * start halts the JVM with status 1.
     *
     * @param a the parsed command line
     * @param start starts the node
     * @param close closes it
     * @param awaitClose waits until it is closed
     * @param distribution the distribution and version, printed once the node has started
     * @throws InterruptedException when interrupted while running
     */
    static void run(final NodeArgs a, final Step start, final Step close, final Step awaitClose,
            final String distribution) throws InterruptedException {
        final CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                close.run();
                awaitClose.run();
            } catch (final Exception e) {
                System.err.println("scalelab-node: close: " + e);
            } finally {
                a.deleteHomeIfAsked();
                closed.countDown();
            }
        }, "scalelab-node-shutdown"));
        a.startWatchdog();
        try {
            start.run();
        } catch (final Throwable t) {
            t.printStackTrace();
            System.err.println("scalelab-node: failed to start: " + t);
            a.deleteHomeIfAsked();
            Runtime.getRuntime().halt(1);
        }
        System.out.println("scalelab-node: started " + a.nodeName() + " (" + distribution + ")");
        closed.await();
    }
}
