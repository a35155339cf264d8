// Package termtable prints tables for the terminal that fit a width (120
// columns, as `scalelab list` wraps its text): a table too wide is cut
// into blocks of columns printed one under the other, each repeating the
// rows' key columns, and key cells too long for any block are shortened.
package termtable

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Width is the width scalelab's terminal tables fit.
const Width = 120

// Table is a header and rows of cells.
type Table struct {
	Header []string
	Rows   [][]string
	// Keys is how many leading columns name a row (repeated in every
	// block); at least 1.
	Keys int
	// Group keeps the other columns together in groups of this many (a
	// figure and its change); 0 or 1 splits anywhere.
	Group int
	// Indent starts every line.
	Indent string
	// Right aligns the non-key columns right (figures).
	Right bool
}

const gap = 2

// Write prints t within width columns.
func (t Table) Write(w io.Writer, width int) error {
	n := len(t.Header)
	for _, r := range t.Rows {
		n = max(n, len(r))
	}
	if n == 0 {
		return nil
	}
	keys := min(max(t.Keys, 1), n)
	group := max(t.Group, 1)
	widths := make([]int, n)
	measure := func(row []string) {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	measure(t.Header)
	for _, r := range t.Rows {
		measure(r)
	}
	span := func(cols []int) int {
		s := utf8.RuneCountInString(t.Indent)
		for i, c := range cols {
			if i > 0 {
				s += gap
			}
			s += widths[c]
		}
		return s
	}
	var keyCols []int
	for i := range keys {
		keyCols = append(keyCols, i)
	}
	// groups of the other columns
	var groups [][]int
	for c := keys; c < n; c += group {
		var g []int
		for i := c; i < min(c+group, n); i++ {
			g = append(g, i)
		}
		groups = append(groups, g)
	}
	// shorten the key columns (the last first) until the key columns and
	// the widest group fit
	widest := 0
	for _, g := range groups {
		widest = max(widest, span(g)-utf8.RuneCountInString(t.Indent)+gap)
	}
	for k := keys - 1; k >= 0 && span(keyCols)+widest > width; k-- {
		over := span(keyCols) + widest - width
		widths[k] = max(widths[k]-over, 4)
	}
	// blocks: the key columns and as many groups as fit
	var blocks [][]int
	cur := append([]int(nil), keyCols...)
	for _, g := range groups {
		if len(cur) > keys && span(append(append([]int(nil), cur...), g...)) > width {
			blocks = append(blocks, cur)
			cur = append([]int(nil), keyCols...)
		}
		cur = append(cur, g...)
	}
	blocks = append(blocks, cur)
	for b, cols := range blocks {
		if b > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		if len(t.Header) > 0 {
			if err := t.line(w, t.Header, cols, widths, keys); err != nil {
				return err
			}
		}
		for _, r := range t.Rows {
			if err := t.line(w, r, cols, widths, keys); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t Table) line(w io.Writer, row []string, cols, widths []int, keys int) error {
	var b strings.Builder
	b.WriteString(t.Indent)
	for i, c := range cols {
		cell := ""
		if c < len(row) {
			cell = fit(row[c], widths[c])
		}
		pad := strings.Repeat(" ", widths[c]-utf8.RuneCountInString(cell))
		if i > 0 {
			b.WriteString(strings.Repeat(" ", gap))
		}
		if t.Right && c >= keys {
			b.WriteString(pad + cell)
		} else {
			b.WriteString(cell + pad)
		}
	}
	_, err := fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	return err
}

// fit shortens s to n runes, ending in "…" when cut.
func fit(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(n-1, 0)]) + "…"
}
