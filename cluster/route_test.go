package cluster

import "testing"

func TestReroute(t *testing.T) {
	st := &State{Target: "postgres://bench@127.0.0.1:5432/bench,127.0.0.1:54321",
		Nodes: []Node{{Name: "node1", Host: "127.0.0.1", Port: 5432}, {Name: "node2", Host: "127.0.0.1", Port: 54321}, {Name: "node3", Host: "10.231.4.3", Port: 7000, Client: "127.0.0.1:40000"}}}
	var routes []Route
	for _, s := range []string{"127.0.0.1:5432=10.231.9.1:4001", "127.0.0.1:40000=10.231.9.1:4003"} {
		r, err := ParseRoute(s)
		if err != nil {
			t.Fatal(err)
		}
		routes = append(routes, r)
	}
	st.Reroute(routes)
	if want := "postgres://bench@10.231.9.1:4001/bench,127.0.0.1:54321"; st.Target != want {
		t.Errorf("target %q, want %q (a longer port must stay)", st.Target, want)
	}
	for i, want := range []string{"10.231.9.1:4001", "127.0.0.1:54321", "10.231.9.1:4003"} {
		if got := st.Nodes[i].ClientAddress(); got != want {
			t.Errorf("%s: client address %s, want %s", st.Nodes[i].Name, got, want)
		}
	}
	for _, bad := range []string{"127.0.0.1:5432", "a=b", "=1.2.3.4:5"} {
		if _, err := ParseRoute(bad); err == nil {
			t.Errorf("ParseRoute(%q) accepted", bad)
		}
	}
}
