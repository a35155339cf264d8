package cluster

import (
	"strings"
	"testing"
	"time"
)

func TestParseLinks(t *testing.T) {
	t.Parallel()
	// per-node settings apply on top of those for all, whatever the order
	ls, err := ParseLinks([]string{"node2:loss=1%,delay=5ms", "delay=1ms,jitter=1ms", "rate=100mbit"})
	if err != nil {
		t.Fatal(err)
	}
	if !ls.Proxied {
		t.Error("delay given but not proxied")
	}
	if all := ls.Of("node1"); all.Delay != time.Millisecond || all.Jitter != time.Millisecond || all.RateKbit != 100000 || all.LossPct != 0 {
		t.Errorf("node1 link %+v", all)
	}
	if n2 := ls.Of("node2"); n2.Delay != 5*time.Millisecond || n2.Jitter != time.Millisecond || n2.LossPct != 1 || n2.RateKbit != 100000 {
		t.Errorf("node2 link %+v", n2)
	}
	if s := ls.Of("node2").String(); s != "delay=5ms,jitter=1ms,loss=1%,rate=100000kbit" {
		t.Errorf("String() = %q", s)
	}
	if ls, err := ParseLinks([]string{"loss=0.5%,rate=2gbit"}); err != nil || ls.Proxied || ls.Of("node3").RateKbit != 2000000 {
		t.Errorf("loss and rate only: %+v, %v", ls, err)
	}
	if (&Links{}).Of("node1").String() != "none" || (*Links)(nil).Of("node1") != (Link{}) {
		t.Error("no links: want none")
	}
	for _, c := range []struct{ in, says string }{
		{"delay=0.2ms", "whole milliseconds"},
		{"delay=soon", "not a duration"},
		{"loss=120%", "from 0 to 100"},
		{"rate=fast", "at least 8kbit"},
		{"rate=1kbit", "at least 8kbit"},
		{"lag=1ms", `unknown key "lag"`},
		{"delay", "not key=value"},
		{"db1:delay=1ms", "not a node name"},
	} {
		_, err := ParseLinks([]string{c.in})
		if err == nil || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "[NODE:]key=value") {
			t.Errorf("ParseLinks(%q) = %v, want an error saying %q with the form", c.in, err, c.says)
		}
	}
}

// TestSetLinkWithoutLinks refuses link changes on a cluster that has none,
// whose nodes the load generator reaches at their own addresses.
func TestSetLinkWithoutLinks(t *testing.T) {
	t.Parallel()
	st := &State{Name: "c"}
	if err := st.SetDelay("node1", Link{Delay: time.Millisecond}); err == nil || !strings.Contains(err.Error(), "--link") {
		t.Errorf("SetDelay without links: %v", err)
	}
	if err := st.PrepareLinks(&Links{}); err == nil || !strings.Contains(err.Error(), "--netns") {
		t.Errorf("PrepareLinks without a network: %v", err)
	}
	if h, p, err := st.ClientAddr("node1", "10.0.0.2", 5432); err != nil || h != "10.0.0.2" || p != 5432 {
		t.Errorf("ClientAddr without links: %s %d %v", h, p, err)
	}
	n := Node{Name: "node1", Host: "10.0.0.2", Port: 5432}
	if err := st.SetClient(&n); err != nil || n.Client != "" || n.ClientAddress() != "10.0.0.2:5432" {
		t.Errorf("SetClient without links: client %q, address %s, %v", n.Client, n.ClientAddress(), err)
	}
}
