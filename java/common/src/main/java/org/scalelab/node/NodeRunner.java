/*
 * scalelab: what the search-engine node launchers share, whatever the
 * distribution's own classes.
 */
package org.scalelab.node;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.function.BiConsumer;

/** Runs one node: settings, classpath plugins, start, clean close on SIGTERM. */
final class NodeRunner {

    /** A node of some distribution, seen through what the runner needs. */
    interface Lifecycle {
        /**
         * Starts the node.
         *
         * @throws Exception when it cannot start
         */
        void start() throws Exception;

        /**
         * Closes the node and waits for it to be closed.
         *
         * @throws Exception when closing fails
         */
        void close() throws Exception;
    }

    private NodeRunner() {
    }

    /**
     * Hands the command line's settings to a distribution's settings builder:
     * a value in brackets is a list.
     *
     * @param a the parsed command line
     * @param put puts one value
     * @param putList puts a list
     */
    static void putSettings(final NodeArgs a, final BiConsumer<String, String> put,
            final BiConsumer<String, List<String>> putList) {
        a.settings.forEach((k, v) -> {
            if (v instanceof List<?> l) {
                putList.accept(k, l.stream().map(Object::toString).toList());
            } else {
                put.accept(k, v.toString());
            }
        });
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
     * process ends), then closes it cleanly and deletes its home when asked.
     * A node that fails to start halts the JVM with status 1.
     *
     * @param a the parsed command line
     * @param node the node
     * @param started the line printed once the node has started
     * @throws InterruptedException when interrupted while running
     */
    static void run(final NodeArgs a, final Lifecycle node, final String started) throws InterruptedException {
        final CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
            } catch (final Exception e) {
                System.err.println("scalelab-node: close: " + e);
            } finally {
                a.deleteHomeIfAsked();
                closed.countDown();
            }
        }, "scalelab-node-shutdown"));
        a.startWatchdog();
        try {
            node.start();
        } catch (final Throwable t) {
            t.printStackTrace();
            System.err.println("scalelab-node: failed to start: " + t);
            a.deleteHomeIfAsked();
            Runtime.getRuntime().halt(1);
        }
        System.out.println("scalelab-node: started " + started);
        closed.await();
    }
}
