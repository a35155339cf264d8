package audit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/scalelab/scalelab/metrics"
)

// Span is a write of items First..First+N-1 and what became of it.
type Span struct {
	First   int64
	N       int32
	Outcome Outcome
	Class   metrics.Class // error class of a failed or unknown write
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

// Read reads a history, binary (this build's) or text (earlier builds'),
// keeping only what can still decide a verdict (History). A torn tail (a
// partial last block or line) of a dying process is ignored
// (History.Torn); any other malformed record is an error naming where it
// is. A write without an outcome counts with the outcome Invoked. The
// History also keeps every register version read (1 bit a write), which
// the check of a killed run's history needs (CheckConfig.Incomplete).
func Read(r io.Reader) (*History, error) {
	h := newHistory()
	h.logged = &idSet{}
	if err := Walk(r, h.addSpan, h.addRegister, &h.Torn); err != nil {
		return nil, err
	}
	return h, nil
}

// Walk reads a history and calls span for every item write and reg for
// every register write as its outcome is read (the writes without one
// last, with the outcome Invoked); torn, when not nil, is set when the
// history ends in a torn tail.
func Walk(r io.Reader, span func(Span), reg func(RegWrite), torn *bool) error {
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.ReadSlice('\n')
	if err != nil && err != io.EOF {
		if err == bufio.ErrBufferFull {
			return fmt.Errorf("line 1: not a scalelab write history header (want %q)", Header)
		}
		return fmt.Errorf("read write history: %w", err)
	}
	if err == io.EOF {
		if len(head) > 0 && torn != nil {
			*torn = true // a process that died before its header was whole
		}
		return nil
	}
	head = head[:len(head)-1]
	d := newDecoder(span, reg)
	var t bool
	switch string(head) {
	case HeaderV3:
		t, err = d.readBinary(br, int64(len(head)+1))
	case headerV2, headerV1:
		t, err = d.readText(br)
	default:
		return fmt.Errorf("line 1: %q is not a scalelab write history header (want %q)", head, Header)
	}
	if err != nil {
		return err
	}
	d.finish()
	if torn != nil {
		*torn = t
	}
	return nil
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

// metricsOK is the class of an acknowledged write.
const metricsOK = metrics.OK

// WalkFile is Walk over the history file at path (a missing file is
// ErrNoHistory).
func WalkFile(path string, span func(Span), reg func(RegWrite)) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: %s", ErrNoHistory, path)
		}
		return fmt.Errorf("read write history: %w", err)
	}
	defer f.Close()
	if err := Walk(f, span, reg, nil); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
