package cassandra

import (
	"fmt"
	"path/filepath"
)

// nodeYAML is a node's cassandra.yaml: its loopback address for gossip and
// CQL, the seed, directories under home, authentication on, small caches
// and thread pools for a 2-core machine, batches up to 4 MiB (bulk loads),
// server timeouts below the client's, and no snapshot when a scenario
// drops or truncates its tables.
func nodeYAML(clusterName, home, addr, seed string, storagePort, nativePort, numTokens int) string {
	d := func(sub string) string { return filepath.Join(home, sub) }
	return fmt.Sprintf(`# written by scalelab cluster up: one node of a local ring
cluster_name: '%s'
num_tokens: %d
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
endpoint_snitch: SimpleSnitch
auto_bootstrap: false

listen_address: %s
rpc_address: %s
storage_port: %d
native_transport_port: %d
start_native_transport: true
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "%s:%d"

authenticator: PasswordAuthenticator
authorizer: CassandraAuthorizer
role_manager: CassandraRoleManager
network_authorizer: AllowAllNetworkAuthorizer

data_file_directories:
  - %s
commitlog_directory: %s
saved_caches_directory: %s
hints_directory: %s
cdc_raw_directory: %s

commitlog_sync: periodic
commitlog_sync_period: 10000ms
commitlog_segment_size: 16MiB
disk_access_mode: mmap_index_only
concurrent_reads: 8
concurrent_writes: 16
concurrent_counter_writes: 8
concurrent_compactors: 1
compaction_throughput: 64MiB/s
key_cache_size: 16MiB
counter_cache_size: 4MiB
file_cache_size: 64MiB
memtable_allocation_type: heap_buffers
native_transport_max_threads: 64

batch_size_warn_threshold: 256KiB
batch_size_fail_threshold: 4MiB
unlogged_batch_across_partitions_warn_threshold: 100000

read_request_timeout: 10000ms
range_request_timeout: 20000ms
write_request_timeout: 5000ms
counter_write_request_timeout: 5000ms
request_timeout: 20000ms

auto_snapshot: false
dynamic_snitch: true
hinted_handoff_enabled: true
max_hint_window: 3h
materialized_views_enabled: false
sasi_indexes_enabled: false
default_secondary_index: sai
default_secondary_index_enabled: true
`, clusterName, numTokens, addr, addr, storagePort, nativePort, seed, storagePort,
		d("data"), d("commitlog"), d("saved_caches"), d("hints"), d("cdc_raw"))
}

// logbackXML sends the node's INFO log to stdout (the node's log file) and
// keeps the noisy parts at WARN.
const logbackXML = `<configuration scan="false">
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder>
      <pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern>
    </encoder>
  </appender>
  <logger name="org.apache.cassandra" level="INFO"/>
  <logger name="com.datastax" level="WARN"/>
  <logger name="io.netty" level="WARN"/>
  <logger name="org.apache.cassandra.utils.SigarLibrary" level="ERROR"/>
  <logger name="org.apache.cassandra.service.StartupChecks" level="ERROR"/>
  <root level="INFO">
    <appender-ref ref="STDOUT"/>
  </root>
</configuration>
`
