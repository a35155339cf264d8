package audit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/scalelab/scalelab/metrics"
)

// Span is a write of items First..First+N-1 and what became of it (24
// bytes: a long run's history is held in memory for the read-back).
type Span struct {
	First   int64
	N       int32
	Outcome Outcome
	Class   metrics.Class // error class of a failed or unknown write
}

// History is a history file as read back.
type History struct {
	Spans []Span
	// Registers are the register writes (updates and deletes), in the
	// order they were invoked.
	Registers []RegWrite
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
			c.UnknownByClass[s.Class.String()] += n
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
	regs := map[int64]int{} // version -> index in h.Registers
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
			if string(line) != Header && string(line) != headerV1 {
				return nil, fmt.Errorf("line 1: %q is not a scalelab write history header (want %q)", line, Header)
			}
			continue
		}
		if len(line) > 0 && isRegisterTag(line[0]) {
			if err := h.parseRegister(line, regs); err != nil {
				return nil, fmt.Errorf("line %d: %w", lineNo, err)
			}
			continue
		}
		if err := h.parse(line, open); err != nil {
			return nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
	}
}

func (h *History) parse(line []byte, open map[int64]int) error {
	var fields [5][]byte
	nf := 0
	for rest := line; len(rest) > 0 && nf < len(fields); {
		var f []byte
		f, rest = nextField(rest)
		if len(f) > 0 {
			fields[nf] = f
			nf++
		}
	}
	if nf < 3 || nf > 4 || len(fields[0]) != 1 {
		return fmt.Errorf("%q: want TAG FIRST N [CLASS] with TAG one of i, o, f, u", line)
	}
	first, ok := parseInt(fields[1])
	if !ok {
		return fmt.Errorf("%q: bad first item %q (want an integer)", line, fields[1])
	}
	n64, ok := parseInt(fields[2])
	if !ok || n64 <= 0 || n64 > math.MaxInt32 {
		return fmt.Errorf("%q: bad item count %q (want a positive integer)", line, fields[2])
	}
	n := int32(n64)
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
	if nf > 3 {
		h.Spans[i].Class = classNamed(string(fields[3]))
	}
	return nil
}

// nextField splits off the text before the first space.
func nextField(b []byte) (field, rest []byte) {
	if i := bytes.IndexByte(b, ' '); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

// parseInt parses a decimal integer without allocating.
func parseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if v > (math.MaxInt64-d)/10 {
			return 0, false // overflow
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, true
}

// classNamed returns the error class named name (metrics.Other for a name
// this build does not know).
func classNamed(name string) metrics.Class {
	for c := metrics.OK; c < metrics.NumClasses; c++ {
		if c.String() == name {
			return c
		}
	}
	return metrics.Other
}
