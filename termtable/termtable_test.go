package termtable

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func lines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }

func TestNarrowTableIsOneBlock(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	tab := Table{Header: []string{"op", "count", "p99 ms"}, Rows: [][]string{{"read", "1000", "1.5"}, {"update", "20", "12"}}, Right: true}
	if err := tab.Write(&b, Width); err != nil {
		t.Fatal(err)
	}
	want := "op      count  p99 ms\nread     1000     1.5\nupdate     20      12\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestWideTableSplitsIntoBlocks(t *testing.T) {
	t.Parallel()
	head := []string{"combination", "n"}
	row := []string{"c01 users=1, cache=redis, records.eager=true", "3"}
	for i := range 8 {
		head = append(head, fmt.Sprintf("metric %d ms", i), "vs baseline")
		row = append(row, "1234.5 ±12.3", "+12.5% (p=0.001)")
	}
	var b bytes.Buffer
	tab := Table{Header: head, Rows: [][]string{row, row}, Keys: 2, Group: 2, Indent: "  "}
	if err := tab.Write(&b, Width); err != nil {
		t.Fatal(err)
	}
	ls := lines(b.String())
	blocks := 1
	for _, l := range ls {
		if utf8.RuneCountInString(l) > Width {
			t.Errorf("line of %d columns: %q", utf8.RuneCountInString(l), l)
		}
		if l == "" {
			blocks++
		}
	}
	if blocks < 2 {
		t.Fatalf("a table of %d columns in one block:\n%s", len(head), b.String())
	}
	// every block repeats the key columns, every metric appears once with
	// its change beside it
	if n := strings.Count(b.String(), "  combination"); n != blocks {
		t.Errorf("%d headers for %d blocks", n, blocks)
	}
	for i := range 8 {
		if n := len(regexp.MustCompile(fmt.Sprintf(`metric %d ms +vs baseline`, i)).FindAllString(b.String(), -1)); n != 1 {
			t.Errorf("metric %d shows %d times with its change beside it:\n%s", i, n, b.String())
		}
	}
}

func TestLongKeysAreShortened(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 200)
	var b bytes.Buffer
	tab := Table{Header: []string{"name", "value"}, Rows: [][]string{{long, "1"}}}
	if err := tab.Write(&b, Width); err != nil {
		t.Fatal(err)
	}
	for _, l := range lines(b.String()) {
		if utf8.RuneCountInString(l) > Width {
			t.Errorf("line of %d columns", utf8.RuneCountInString(l))
		}
	}
	if !strings.Contains(b.String(), "x…") {
		t.Errorf("the long key is not marked as cut:\n%s", b.String())
	}
}
