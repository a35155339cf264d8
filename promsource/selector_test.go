package promsource

import (
	"strings"
	"testing"
)

func TestParseSelector(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{`instance=~"web.*:9100"`, `{instance=~"web.*:9100"}`, ""},
		{`process_cpu_seconds_total{job="app", instance!="x"}`, `process_cpu_seconds_total{job="app",instance!="x"}`, ""},
		{`node_cpu_seconds_total`, `node_cpu_seconds_total{}`, ""},
		{"{job=`a\"b`}", `{job="a\"b"}`, ""},
		{``, "", "empty selector"},
		{`job=app`, "", "want a quoted value"},
		{`job~"a"`, "", "want one of = != =~ !~"},
		{`job=~"("`, "", "regular expression of job"},
		{`{job="a"`, "", "without its closing"},
		{`job="a" instance="b"`, "", "want ','"},
		{`job="a`, "", "unterminated"},
	} {
		s, err := ParseSelector(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || s.String() != c.want {
			t.Errorf("%q: %q %v, want %q", c.in, s.String(), err, c.want)
		}
	}
}

func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{`instance=~"web.*:9100"`, `m{a="b",c!~"d"}`, "{a=`b`}", `a="\""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseSelector(in)
		if err != nil {
			return
		}
		again, err := ParseSelector(s.String())
		if err != nil || again.String() != s.String() {
			t.Fatalf("%q -> %q does not parse back the same: %q %v", in, s.String(), again.String(), err)
		}
	})
}
