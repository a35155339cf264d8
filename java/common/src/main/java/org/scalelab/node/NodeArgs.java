/*
 * scalelab: command-line arguments of a node launcher.
 */
package org.scalelab.node;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * The arguments scalelab passes to a node launcher: --home DIR, -Ekey=value settings,
 * and for tests --exit-with-pid PID (stop when that process ends) and --delete-home-on-exit.
 * Parsing them also prepares the node's home directory.
 */
final class NodeArgs {

    /** A console-only log4j2 configuration: scalelab sends stdout to the node's log file. */
    static final String LOG4J2 = String.join("\n",
            "status = error",
            "appender.console.type = Console",
            "appender.console.name = console",
            "appender.console.layout.type = PatternLayout",
            "appender.console.layout.pattern = [%d{ISO8601}][%-5p][%-25c{1.}] %m%n",
            "rootLogger.level = info",
            "rootLogger.appenderRef.console.ref = console",
            "logger.deprecation.name = org.opensearch.deprecation",
            "logger.deprecation.level = error",
            "logger.esdeprecation.name = org.elasticsearch.deprecation",
            "logger.esdeprecation.level = error",
            "");

    /** The node's home directory, absolute. */
    Path home;
    long exitWithPid;
    boolean deleteHome;
    final Map<String, Object> settings = new LinkedHashMap<>();

    private NodeArgs() {
    }

    /**
     * Parses the arguments (exits with status 2 on bad usage) and prepares the
     * node's home directory (see {@link #prepareHome}).
     *
     * @param args the command line
     * @param yml the distribution's configuration file name
     * @return the parsed arguments
     * @throws IOException when the home directory cannot be prepared
     */
    static NodeArgs parse(final String[] args, final String yml) throws IOException {
        final NodeArgs a = new NodeArgs();
        for (int i = 0; i < args.length; i++) {
            final String s = args[i];
            if (s.equals("--home") && i + 1 < args.length) {
                a.home = Path.of(args[++i]).toAbsolutePath();
            } else if (s.equals("--exit-with-pid") && i + 1 < args.length) {
                a.exitWithPid = Long.parseLong(args[++i]);
            } else if (s.equals("--delete-home-on-exit")) {
                a.deleteHome = true;
            } else if (s.startsWith("-E") && s.indexOf('=') > 2) {
                final int eq = s.indexOf('=');
                final String k = s.substring(2, eq);
                final String v = s.substring(eq + 1);
                if (v.startsWith("[") && v.endsWith("]")) {
                    final String inner = v.substring(1, v.length() - 1).trim();
                    a.settings.put(k, inner.isEmpty() ? List.of()
                            : Arrays.stream(inner.split(",")).map(String::trim).toList());
                } else {
                    a.settings.put(k, v);
                }
            } else {
                usage("unexpected argument " + s);
            }
        }
        if (a.home == null) {
            usage("--home is required");
        }
        a.prepareHome(yml);
        return a;
    }

    private static void usage(final String msg) {
        System.err.println("scalelab-node: " + msg + "\nusage: --home DIR [--exit-with-pid PID] [--delete-home-on-exit] [-Ekey=value | -Ekey=[a,b] ...]");
        System.exit(2);
    }

    /**
     * Creates home/config with an empty node configuration file (every setting
     * comes from the command line) and the console log configuration, and the
     * (empty) home/modules and home/plugins directories the node looks into.
     *
     * @param yml the distribution's configuration file name
     * @throws IOException when the files cannot be written
     */
    private void prepareHome(final String yml) throws IOException {
        final Path config = config();
        Files.createDirectories(config);
        Files.writeString(config.resolve(yml), "# settings come from scalelab's command line\n", StandardCharsets.UTF_8);
        Files.writeString(config.resolve("log4j2.properties"), LOG4J2, StandardCharsets.UTF_8);
        Files.createDirectories(home.resolve("modules"));
        Files.createDirectories(home.resolve("plugins"));
    }

    /**
     * The node's configuration directory.
     *
     * @return home/config
     */
    Path config() {
        return home.resolve("config");
    }

    /**
     * The node's name, from -Enode.name.
     *
     * @return the name, or null when not given
     */
    String nodeName() {
        final Object n = settings.get("node.name");
        return n == null ? null : n.toString();
    }

    /**
     * Hands the command line's settings to a distribution's settings builder
     * (a value in brackets is a list), with the node's home and, unless
     * given, its data and log directories under it.
     *
     * @param put puts one value
     * @param putList puts a list
     */
    void putSettings(final BiConsumer<String, String> put, final BiConsumer<String, List<String>> putList) {
        put.accept("path.home", home.toString());
        if (!settings.containsKey("path.data")) {
            put.accept("path.data", home.resolve("data").toString());
        }
        if (!settings.containsKey("path.logs")) {
            put.accept("path.logs", home.resolve("logs").toString());
        }
        settings.forEach((k, v) -> {
            if (v instanceof List<?> l) {
                putList.accept(k, l.stream().map(Object::toString).toList());
            } else {
                put.accept(k, v.toString());
            }
        });
    }

    /**
     * With --exit-with-pid, starts a daemon thread that exits the JVM (running
     * the shutdown hooks, which close the node) once that process has ended:
     * a test's nodes do not outlive the test binary.
     */
    void startWatchdog() {
        Watchdog.start(exitWithPid);
    }

    /**
     * With --delete-home-on-exit, deletes the node's home directory (data and
     * logs); called after the node has closed.
     */
    void deleteHomeIfAsked() {
        if (!deleteHome) {
            return;
        }
        try (java.util.stream.Stream<Path> paths = Files.walk(home)) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (final IOException e) {
            System.err.println("scalelab-node: delete " + home + ": " + e);
        }
    }
}
