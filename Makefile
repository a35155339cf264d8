# scalelab: see README.md. Every target installs what it needs.
GO      ?= go
BIN     := bin/scalelab
PKGS    := ./...
STATICCHECK_VERSION := v0.8.2

.PHONY: all setup build ferretdb demo test lint unit fuzz bench bench-report bench-search bench-cassandra bench-logs-stores clean tools test-deps java

all: build

# setup: check the toolchain, fetch the Go modules (from the Go module proxy)
# and install, when missing, Debian's PostgreSQL 15 server binaries (the
# postgres engine's local clusters), HAProxy (the app tier's balancer),
# redis-server and memcached (the redis and memcached engines' local
# clusters).
PG_BIN ?= /usr/lib/postgresql/15/bin
setup:
	@command -v $(GO) >/dev/null || { echo "scalelab needs Go 1.26+ (https://go.dev/dl) on PATH" >&2; exit 2; }
	$(GO) mod download
	@missing=""; [ -x $(PG_BIN)/initdb ] || missing="$$missing postgresql"; \
	command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] || missing="$$missing haproxy"; \
	command -v redis-server >/dev/null || [ -x /usr/bin/redis-server ] || missing="$$missing redis-server"; \
	command -v memcached >/dev/null || [ -x /usr/bin/memcached ] || missing="$$missing memcached"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing$$missing (apt-get) for the local clusters and the app tier"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
		else \
			echo "note: local PostgreSQL, Redis and memcached clusters and the app tier need:$$missing; run  sudo apt-get install -y$$missing" >&2; \
		fi; \
	fi

build: setup
	$(GO) build -o $(BIN) ./cmd/scalelab

# ferretdb: the FerretDB v1 server that `scalelab cluster up ferretdb` and
# the mongodb engine's tests start (ferretdb/, a Go module of its own so
# that FerretDB stays out of scalelab's build; the Go module proxy serves
# it). scalelab also builds it on first use when it is missing.
FERRETDB_BIN := bin/scalelab-ferretdb
ferretdb: $(FERRETDB_BIN)
$(FERRETDB_BIN): ferretdb/go.mod ferretdb/go.sum ferretdb/main.go
	cd ferretdb && $(GO) build -o ../$(FERRETDB_BIN) .

# demo: 8 patients of the mHealth backend on the embedded SQLite engine,
# ending with the summary table and a results directory with report.html.
demo: build
	./$(BIN) run mhealth --users 8 --duration 15s --warmup 3s

# test: format and vet checks, every unit and integration test (with the
# race detector), and a short run of each fuzz target.
test: lint unit fuzz

lint: setup
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	cd ferretdb && $(GO) vet .
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) $(PKGS)
	bash scripts/check-links.sh

# tools: HdrHistogram's Java jar, with which a test proves intervals.hlog is
# readable by HdrHistogram's own HistogramLogProcessor (needs java and mvn).
HDR_ARTIFACT := org.hdrhistogram:HdrHistogram:2.2.2
tools: test-deps
	@if command -v mvn >/dev/null && command -v java >/dev/null; then \
		mvn -q -B dependency:get -Dartifact=$(HDR_ARTIFACT); \
	else echo "note: java/mvn missing: the HdrHistogram tool test will be skipped (apt-get install default-jdk-headless maven)"; fi

# test-deps: the Debian packages the integration tests need (a JDK and
# Maven for the search-engine nodes and HdrHistogram's tool, Chromium for
# the report's browser test, iproute2's ip and tc for the network
# namespaces and links of package cluster/netns, nftables' nft for packet loss and
# partitions between groups, HAProxy for the app tier's balancer, redis-server
# and memcached for the redis and memcached engines' servers), installed when missing and running as root; otherwise it
# prints the command to run.
TEST_PKGS_CHECK := java:default-jdk-headless mvn:maven chromium:chromium ip:iproute2 nft:nftables haproxy:haproxy redis-server:redis-server memcached:memcached
test-deps:
	@missing=""; for pair in $(TEST_PKGS_CHECK); do cmd=$${pair%%:*}; pkg=$${pair#*:}; \
		command -v $$cmd >/dev/null || [ -x /usr/sbin/$$cmd ] || missing="$$missing $$pkg"; done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing$$missing for the tests"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
		else echo "note: the integration tests need:$$missing; run  sudo apt-get install -y$$missing" >&2; fi; \
	fi

# java: the OpenSearch and Elasticsearch node launchers (java/, one JVM per
# node), fetching the codelibs runner jars from Maven Central once into
# ~/.m2. OpenSearch 3 builds and runs on JDK 21+, found by version
# (scripts/find-jdk.sh; name one with make JDK21=/path/to/jdk), Elasticsearch
# 7.10.2 on Java 17 (default-jdk-headless).
JDK21 ?= $(shell scripts/find-jdk.sh 21 2>/dev/null)
JAVA_OS := java/opensearch/target/scalelab-opensearch-node.jar
JAVA_ES := java/elasticsearch/target/scalelab-elasticsearch-node.jar
JAVA_CS := java/cassandra/target/scalelab-cassandra-node.jar
java: $(JAVA_OS) $(JAVA_ES) $(JAVA_CS)
$(JAVA_OS): java/pom.xml java/opensearch/pom.xml $(wildcard java/common/src/main/java/org/scalelab/node/*.java java/opensearch/src/main/java/org/scalelab/node/*.java)
	@if ! command -v mvn >/dev/null; then echo "note: mvn missing: opensearch clusters unavailable (apt-get install -y maven)" >&2; \
	elif [ -z "$(JDK21)" ] || [ ! -x "$(JDK21)/bin/java" ]; then echo "note: no JDK 21+ found: opensearch clusters unavailable (install one, or make JDK21=/path/to/jdk)" >&2; \
	else JAVA_HOME=$(JDK21) mvn -q -B -f java/pom.xml -pl opensearch package && touch $@; fi
$(JAVA_ES): java/pom.xml java/elasticsearch/pom.xml $(wildcard java/common/src/main/java/org/scalelab/node/*.java java/elasticsearch/src/main/java/org/scalelab/node/*.java)
	@if ! command -v mvn >/dev/null || ! command -v java >/dev/null; then echo "note: java/mvn missing: elasticsearch clusters unavailable (apt-get install -y default-jdk-headless maven)" >&2; \
	else mvn -q -B -f java/pom.xml -pl elasticsearch package && touch $@; fi
# Cassandra 5.0 (org.apache.cassandra:cassandra-all) runs on Java 11-17.
$(JAVA_CS): java/pom.xml java/cassandra/pom.xml $(wildcard java/common/src/main/java/org/scalelab/node/*.java java/cassandra/src/main/java/org/scalelab/node/*.java)
	@if ! command -v mvn >/dev/null || ! command -v java >/dev/null; then echo "note: java/mvn missing: cassandra clusters unavailable (apt-get install -y default-jdk-headless maven)" >&2; \
	else mvn -q -B -f java/pom.xml -pl cassandra package && touch $@; fi

# unit: every test with the race detector. The search and Cassandra nodes the
# tests share are started once for the whole run (scripts/test-clusters.sh),
# not once per test binary.
unit: setup tools java ferretdb
	bash scripts/test-clusters.sh $(GO) test -race -count=1 -timeout 25m $(PKGS)

# Fuzz runs are counted in executions, not seconds: with a time limit Go's
# fuzzing engine can report "context deadline exceeded" as a failure when
# the limit falls mid-execution. About 5-15 s each on this machine.
FUZZ_N ?= 150000x
FUZZ_N_SLOW ?= 20000x
fuzz: setup
	$(GO) test ./setting -run '^$$' -fuzz FuzzApply -fuzztime $(FUZZ_N)
	$(GO) test ./load -run '^$$' -fuzz FuzzParsePhases -fuzztime $(FUZZ_N)
	$(GO) test ./load -run '^$$' -fuzz FuzzParseThink -fuzztime $(FUZZ_N)
	$(GO) test ./fault -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZ_N_SLOW)
	$(GO) test ./experiment -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZ_N_SLOW)
	$(GO) test ./slo -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZ_N)
	$(GO) test ./report -run '^$$' -fuzz FuzzIntervalLog -fuzztime $(FUZZ_N_SLOW)
	$(GO) test ./audit -run '^$$' -fuzz FuzzRead -fuzztime $(FUZZ_N_SLOW)
	$(GO) test ./cli -run '^$$' -fuzz FuzzParseArgs -fuzztime $(FUZZ_N_SLOW)
	$(GO) test ./scenario/records -run '^$$' -fuzz FuzzParseMix -fuzztime $(FUZZ_N)
	$(GO) test ./promsource -run '^$$' -fuzz FuzzParseSelector -fuzztime $(FUZZ_N)
	$(GO) test ./promsource -run '^$$' -fuzz FuzzParseObserve -fuzztime $(FUZZ_N)

# bench: the performance figures of the core (null engine, recorder, phases).
bench: build
	bash bench/core.sh

# bench-report: the report page of a synthetic one-hour run (target: < 5 s).
bench-report: setup
	$(GO) test ./report -run '^$$' -bench OneHour -benchtime 3x

# bench-search: logs on 1-node vs 3-node OpenSearch clusters (bench/search.sh).
bench-search: build java
	bash bench/search.sh

# bench-cassandra: logs on 1-node vs 3-node Cassandra rings, with and without
# secondary indexes and with query tables, and the rings' start times (bench/cassandra.sh).
bench-cassandra: build java
	bash bench/cassandra.sh

# bench-logs-stores: examples/logs-stores.yaml's quick profile, PostgreSQL,
# OpenSearch and Cassandra's three arms on the log study's tests
# (bench/logs-stores.sh; about 15 minutes, too long for CI).
bench-logs-stores: build java
	bash bench/logs-stores.sh

clean:
	rm -rf bin
