/*
 * scalelab: starts ONE Elasticsearch node in this JVM (scalelab starts one JVM
 * per node, so that a node can be killed alone).
 */
package org.scalelab.node;

import java.util.Collections;
import java.util.concurrent.TimeUnit;

import org.codelibs.elasticsearch.runner.node.ClusterRunnerNode;
import org.elasticsearch.Version;
import org.elasticsearch.common.logging.LogConfigurator;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;
import org.elasticsearch.node.InternalSettingsPreparer;
import org.elasticsearch.node.Node;
import org.elasticsearch.plugins.Plugin;

/**
 * Starts one Elasticsearch node with the modules the codelibs runner loads from
 * the classpath (its node class, without its several-nodes-per-JVM launcher).
 *
 * <p>Usage: {@code java -cp ... org.scalelab.node.ElasticsearchNode --home DIR -Ekey=value ...};
 * a value in brackets ({@code -Enode.roles=[master,data]}) is a list.
 * The node runs until the JVM gets SIGTERM, then closes cleanly.
 */
public final class ElasticsearchNode {

    /** The modules of the Elasticsearch distribution, loaded as classpath plugins when present. */
    static final String[] MODULES = {
            "org.elasticsearch.search.aggregations.matrix.MatrixAggregationPlugin",
            "org.elasticsearch.analysis.common.CommonAnalysisPlugin",
            "org.elasticsearch.ingest.common.IngestCommonPlugin",
            "org.elasticsearch.ingest.useragent.IngestUserAgentPlugin",
            "org.elasticsearch.script.expression.ExpressionPlugin",
            "org.elasticsearch.script.mustache.MustachePlugin",
            "org.elasticsearch.painless.PainlessPlugin",
            "org.elasticsearch.index.mapper.MapperExtrasPlugin",
            "org.elasticsearch.join.ParentJoinPlugin",
            "org.elasticsearch.percolator.PercolatorPlugin",
            "org.elasticsearch.index.rankeval.RankEvalPlugin",
            "org.elasticsearch.index.reindex.ReindexPlugin",
            "org.elasticsearch.plugin.repository.url.URLRepositoryPlugin",
            "org.elasticsearch.transport.Netty4Plugin",
    };

    private ElasticsearchNode() {
    }

    /**
     * Entry point.
     *
     * @param args --home DIR and -Ekey=value settings
     * @throws Exception when the node cannot start
     */
    public static void main(final String[] args) throws Exception {
        final NodeArgs a = NodeArgs.parse(args, "elasticsearch.yml");
        final Settings.Builder b = Settings.builder();
        a.putSettings(b::put, b::putList);
        final Environment env = InternalSettingsPreparer.prepareEnvironment(b.build(), Collections.emptyMap(), a.config(), a::nodeName);
        LogConfigurator.registerErrorListener();
        LogConfigurator.configure(env);
        final Node node = new ClusterRunnerNode(env, NodeRunner.plugins(MODULES, Plugin.class));
        NodeRunner.run(a, node::start, node::close, () -> node.awaitClose(30, TimeUnit.SECONDS), "Elasticsearch " + Version.CURRENT);
    }
}
