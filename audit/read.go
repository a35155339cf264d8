package audit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// Span is a write of items First..First+N-1 and what became of it.
type Span struct {
	First   int64
	N       int
	Outcome Outcome
	Class   string // error class of a failed or unknown write
}

// History is a history file as read back.
type History struct {
	Spans []Span
	// Torn is set when the file ended in a partial line (the process died
	// while writing it); the partial line is ignored.
	Torn bool
}

// Counts are item counts by outcome.
type Counts struct {
	Attempted int64 // every invoked item
	OK        int64
	Failed    int64
	Unknown   int64 // with a recorded unknown outcome
	InFlight  int64 // invoked, no outcome recorded: unknown too
	// UnknownByClass counts unknown items (InFlight under "in_flight") by
	// error class.
	UnknownByClass map[string]int64
}

// Counts sums the history's items by outcome.
func (h *History) Counts() Counts {
	c := Counts{UnknownByClass: map[string]int64{}}
	for _, s := range h.Spans {
		n := int64(s.N)
		c.Attempted += n
		switch s.Outcome {
		case OK:
			c.OK += n
		case Failed:
			c.Failed += n
		case Unknown:
			c.Unknown += n
			c.UnknownByClass[s.Class] += n
		default:
			c.InFlight += n
			c.UnknownByClass["in_flight"] += n
		}
	}
	return c
}

// ReadFile reads a history file; a missing file is ErrNoHistory.
func ReadFile(path string) (*History, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrNoHistory, path)
		}
		return nil, fmt.Errorf("read write history: %w", err)
	}
	defer f.Close()
	h, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// Read parses a history. A last line without its newline is a torn write
// of a dying process and is ignored (History.Torn); any other malformed
// line is an error naming its line number. An invocation without an
// outcome is reported with Outcome Invoked.
func Read(r io.Reader) (*History, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	h := &History{}
	open := map[int64]int{} // first item -> index in h.Spans of an open invocation
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return nil, fmt.Errorf("line %d: longer than %d bytes", lineNo, br.Size())
		}
		if err == io.EOF {
			if len(line) > 0 {
				h.Torn = true
			}
			return h, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read write history: %w", err)
		}
		line = line[:len(line)-1]
		if lineNo == 1 {
			if string(line) != Header {
				return nil, fmt.Errorf("line 1: %q is not a scalelab write history header (want %q)", line, Header)
			}
			continue
		}
		if err := h.parse(line, open); err != nil {
			return nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
	}
}

func (h *History) parse(line []byte, open map[int64]int) error {
	fields := bytes.Fields(line)
	if len(fields) < 3 || len(fields[0]) != 1 {
		return fmt.Errorf("%q: want TAG FIRST N [CLASS] with TAG one of i, o, f, u", line)
	}
	first, err := strconv.ParseInt(string(fields[1]), 10, 64)
	if err != nil {
		return fmt.Errorf("%q: bad first item: %w", line, err)
	}
	n, err := strconv.Atoi(string(fields[2]))
	if err != nil || n <= 0 {
		return fmt.Errorf("%q: bad item count %q (want a positive integer)", line, fields[2])
	}
	var out Outcome
	switch fields[0][0] {
	case tagInvoked:
		if _, dup := open[first]; dup {
			return fmt.Errorf("%q: item %d invoked twice without an outcome", line, first)
		}
		open[first] = len(h.Spans)
		h.Spans = append(h.Spans, Span{First: first, N: n, Outcome: Invoked})
		return nil
	case tagOK:
		out = OK
	case tagFailed:
		out = Failed
	case tagUnknown:
		out = Unknown
	default:
		return fmt.Errorf("%q: unknown tag %q (want i, o, f or u)", line, fields[0])
	}
	i, ok := open[first]
	if !ok || h.Spans[i].N != n {
		return fmt.Errorf("%q: outcome of items %d..%d that were not invoked", line, first, first+int64(n)-1)
	}
	delete(open, first)
	h.Spans[i].Outcome = out
	if len(fields) > 3 {
		h.Spans[i].Class = string(fields[3])
	}
	return nil
}
