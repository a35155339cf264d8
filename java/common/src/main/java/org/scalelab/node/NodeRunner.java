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
     * Hands the command line's settings to a distribution's settings builder
     * (a value in brackets is a list), with the node's home and, unless
     * given, its data and log directories under it.
     *
     * @param a the parsed command line
     * @param home the node's home directory
     * @param put puts one value
     * @param putList puts a list
     */
    static void putSettings(final NodeArgs a, final java.nio.file.Path home, final BiConsumer<String, String> put,
            final BiConsumer<String, List<String>> putList) {
        put.accept("path.home", home.toString());
        if (!a.settings.containsKey("path.data")) {
            put.accept("path.data", home.resolve("data").toString());
        }
        if (!a.settings.containsKey("path.logs")) {
            put.accept("path.logs", home.resolve("logs").toString());
        }
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
     * @param start starts the node
     * @param close closes it and waits until it is closed
     * @param started the line printed once the node has started
     * @throws InterruptedException when interrupted while running
     */
    static void run(final NodeArgs a, final Step start, final Step close, final String started)
            throws InterruptedException {
        final CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                close.run();
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
        System.out.println("scalelab-node: started " + started);
        closed.await();
    }
}
