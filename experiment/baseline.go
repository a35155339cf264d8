package experiment

import (
	"fmt"
	"strings"

	"github.com/scalelab/scalelab/setting"
)

// markBaseline sets every combination's reference. Without `baseline:`
// it is the first combination; a name picks one combination; levels of
// every factor pick one too, while levels of some factors only compare each
// combination with the one that has those levels and its own levels of the
// other factors (all else equal), e.g. {engine: sqlite} per test.
func (s *Spec) markBaseline(d *decoder, combos []*Combination, vectors [][]int) {
	single := func(ref *Combination) {
		ref.Baseline = true
		for _, c := range combos {
			c.ComparedTo = ref.ID
		}
	}
	b := s.Baseline
	if b == nil {
		single(combos[0])
		return
	}
	if len(b.Levels) == 0 {
		var labels []string
		for _, c := range combos {
			if c.Label == b.Name || c.ID == b.Name {
				single(c)
				return
			}
			labels = append(labels, c.Label)
		}
		msg := fmt.Sprintf("%q names no combination; combinations: %s", b.Name, strings.Join(labels, "; "))
		if near := setting.Nearest(b.Name, labels); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		d.errAt(b.Pos, "baseline", "%s", msg)
		return
	}
	v, ok := s.resolve(d, *b, "baseline")
	if !ok {
		return
	}
	byVector := map[string]*Combination{}
	for i, c := range combos {
		byVector[fmt.Sprint(vectors[i])] = c
	}
	for i, c := range combos {
		t := append([]int(nil), vectors[i]...)
		for fi, f := range s.Factors {
			if _, ok := b.Levels[f.Name]; ok {
				t[fi] = v[fi]
			}
		}
		ref, ok := byVector[fmt.Sprint(t)]
		if !ok {
			var want []string
			for fi, f := range s.Factors {
				want = append(want, f.Name+"="+f.Levels[t[fi]].Label)
			}
			d.errAt(b.Pos, "baseline", "combination %s (%s) has no baseline: %s does not run; add it to combinations", c.ID, c.Label, strings.Join(want, " "))
			continue
		}
		c.ComparedTo = ref.ID
		ref.Baseline = true
	}
}

// BaselineRule describes how combinations are compared, for people.
func (s *Spec) BaselineRule(combos []*Combination) string {
	b := s.Baseline
	if b != nil && len(b.Levels) > 0 && len(b.Levels) < len(s.Factors) {
		var parts []string
		for _, f := range s.Factors {
			if l, ok := b.Levels[f.Name]; ok {
				parts = append(parts, f.Name+"="+l)
			}
		}
		return "the combination with " + strings.Join(parts, " ") + ", all else equal"
	}
	for _, c := range combos {
		if c.Baseline {
			return c.ID + " " + c.Label
		}
	}
	return ""
}
