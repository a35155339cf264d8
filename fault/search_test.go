package fault_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine/search/searchtest"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// putJSON sends a PUT with a JSON body to a node.
func putJSON(t *testing.T, n cluster.Node, path, body string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, fmt.Sprintf("http://%s:%d%s", n.Host, n.Port, path), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT %s: %d %s", path, resp.StatusCode, b.String())
	}
}

// TestKillOpenSearchNode: one of 3 OpenSearch nodes is killed mid-run with
// the logs index at replicas=1 (3 shards, so that every node holds
// copies and the kill makes the cluster yellow). The run finishes; errors are counted by
// class around the kill; the cluster is green again (on the 2 remaining
// nodes, once the lost replicas are re-allocated) and the time until then
// is reported; the report marks the kill.
func TestKillOpenSearchNode(t *testing.T) {
	t.Parallel()
	st := searchtest.Start(t, "opensearch", cluster.Spec{Nodes: 3})
	// OpenSearch waits index.unassigned.node_left.delayed_timeout (1m by
	// default) before re-allocating a lost node's replicas; the test does
	// not wait that minute.
	putJSON(t, st.Nodes[0], "/_index_template/faulttest",
		`{"index_patterns":["logs*"],"template":{"settings":{"index.unassigned.node_left.delayed_timeout":"0s"}}}`)
	publish(t, st)

	dir := filepath.Join(t.TempDir(), "r")
	code, stdout, stderr := runCLI(t, "run", "logs", "--engine", "opensearch", "--cluster", st.Name,
		"--duration", "12s", "--users", "4", "--set", "opensearch.replicas=1", "--set", "opensearch.shards=3", "--set", "logs.records=2000",
		"--fault", "kill:node3@4s", "--out", dir, "--progress", "off")
	t.Logf("scalelab run: exit %d\n%s\n%s", code, stdout, stderr)
	r := resultstest.Read(t, dir)
	if r.Status != results.StatusOK && r.Status != results.StatusFailed {
		t.Fatalf("run did not finish: status %s, exit %d: %s", r.Status, r.ExitCode, r.Error)
	}
	if len(r.Failures) > 0 {
		t.Errorf("failed checks after the kill: %v", r.Failures)
	}
	f := r.Faults[0]
	if f.Outcome != "done" || f.InjectedS == nil || f.Before == nil || f.After == nil {
		t.Fatalf("fault %+v", f)
	}
	if f.Before.OK == 0 || f.After.Errors == 0 || len(f.After.ByClass) == 0 {
		t.Errorf("errors around the kill: before %+v, after %+v; want operations before and errors by class after", f.Before, f.After)
	}
	if r.Totals == nil || r.Totals.Errors < f.After.Errors {
		t.Errorf("run totals %+v count fewer errors than the %d after the kill", r.Totals, f.After.Errors)
	}
	wantRecovered(t, r, "green, 2 of 3")
	t.Logf("green again %.1f s after the kill (waited %.1f s after the load)", *r.Recovery.TimeToHealthyS, r.Recovery.WaitedS)
	seen := map[string]bool{}
	for _, e := range r.Events {
		seen[e.Kind+" "+e.Node] = true
		if e.Kind == results.EventHealth && strings.HasPrefix(e.Detail, "yellow") {
			seen["yellow"] = true
		}
	}
	for _, want := range []string{"fault node3", "node_down node3", "yellow"} {
		if !seen[want] {
			t.Errorf("no %q event in %+v", want, r.Events)
		}
	}
	if !strings.Contains(stdout, "healthy (green)") {
		t.Errorf("terminal summary lacks the recovery:\n%s", stdout)
	}
	checkAudit(t, r)
}
