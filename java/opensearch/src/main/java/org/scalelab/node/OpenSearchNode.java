/*
 * scalelab: starts ONE OpenSearch node in this JVM (scalelab starts one JVM
 * per node, so that a node can be killed alone).
 */
package org.scalelab.node;

import java.util.Collections;
import java.util.concurrent.TimeUnit;

import org.codelibs.opensearch.runner.node.OpenSearchRunnerNode;
import org.opensearch.Version;
import org.opensearch.common.logging.LogConfigurator;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.plugins.Plugin;

/**
 * Starts one OpenSearch node with the modules the codelibs runner loads from
 * the classpath (its node class, without its several-nodes-per-JVM launcher).
 *
 * <p>Usage: {@code java -cp ... org.scalelab.node.OpenSearchNode --home DIR -Ekey=value ...};
 * a value in brackets ({@code -Enode.roles=[cluster_manager,data]}) is a list.
 * The node runs until the JVM gets SIGTERM, then closes cleanly.
 */
public final class OpenSearchNode {

    /** The modules of the OpenSearch distribution, loaded as classpath plugins when present. */
    static final String[] MODULES = {
            "org.opensearch.search.aggregations.matrix.MatrixAggregationModulePlugin",
            "org.opensearch.analysis.common.CommonAnalysisModulePlugin",
            "org.opensearch.geo.GeoModulePlugin",
            "org.opensearch.ingest.common.IngestCommonModulePlugin",
            "org.opensearch.ingest.useragent.IngestUserAgentModulePlugin",
            "org.opensearch.script.expression.ExpressionModulePlugin",
            "org.opensearch.script.mustache.MustacheModulePlugin",
            "org.opensearch.painless.PainlessModulePlugin",
            "org.opensearch.index.mapper.MapperExtrasModulePlugin",
            "org.opensearch.join.ParentJoinModulePlugin",
            "org.opensearch.percolator.PercolatorModulePlugin",
            "org.opensearch.index.rankeval.RankEvalModulePlugin",
            "org.opensearch.index.reindex.ReindexModulePlugin",
            "org.opensearch.plugin.repository.url.URLRepositoryModulePlugin",
            "org.opensearch.transport.Netty4ModulePlugin",
    };

    private OpenSearchNode() {
    }

    /**
     * Entry point.
     *
     * @param args --home DIR and -Ekey=value settings
     * @throws Exception when the node cannot start
     */
    public static void main(final String[] args) throws Exception {
        final NodeArgs a = NodeArgs.parse(args, "opensearch.yml");
        final Settings.Builder b = Settings.builder();
        a.putSettings(b::put, b::putList);
        final Environment env = InternalSettingsPreparer.prepareEnvironment(b.build(), Collections.emptyMap(), a.config(), a::nodeName);
        LogConfigurator.registerErrorListener();
        LogConfigurator.configure(env);
        final Node node = new OpenSearchRunnerNode(env, NodeRunner.plugins(MODULES, Plugin.class));
        NodeRunner.run(a, node::start, node::close, () -> node.awaitClose(30, TimeUnit.SECONDS), "OpenSearch " + Version.CURRENT);
    }
}
