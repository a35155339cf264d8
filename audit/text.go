package audit

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
)

// The text histories of earlier builds (v1, v2), one event per line,
// fields separated by one space:
//
//	i FIRST N          the write of items FIRST..FIRST+N-1 was invoked
//	o FIRST N          it was acknowledged
//	f FIRST N CLASS    it failed and is known not applied
//	u FIRST N CLASS    its outcome is unknown (it may or may not be applied)
//	w KEY VERSION T          a write of VERSION to register KEY was invoked at T
//	n KEY VERSION T          a write creating register KEY was invoked at T
//	x KEY VERSION T          a delete of register KEY (numbered VERSION) was invoked at T
//	O KEY VERSION T          it was acknowledged at T
//	F KEY VERSION T CLASS    it failed and is known not applied
//	U KEY VERSION T CLASS    its outcome is unknown
//
// They are read into the same History as binary ones.
const (
	tagInvoked    = 'i'
	tagOK         = 'o'
	tagFailed     = 'f'
	tagUnknown    = 'u'
	tagRegWrite   = 'w'
	tagRegDelete  = 'x'
	tagRegInsert  = 'n'
	tagRegOK      = 'O'
	tagRegFailed  = 'F'
	tagRegUnknown = 'U'
)

func isRegisterTag(c byte) bool {
	switch c {
	case tagRegWrite, tagRegDelete, tagRegInsert, tagRegOK, tagRegFailed, tagRegUnknown:
		return true
	}
	return false
}

// readText decodes the lines of a text history after its header. A last
// line without its newline is a torn write of a dying process and is
// ignored; any other malformed line is an error naming its line number.
func (d *decoder) readText(br *bufio.Reader) (torn bool, err error) {
	for lineNo := 2; ; lineNo++ {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return false, fmt.Errorf("line %d: longer than %d bytes", lineNo, br.Size())
		}
		if err == io.EOF {
			return len(line) > 0, nil
		}
		if err != nil {
			return false, fmt.Errorf("read write history: %w", err)
		}
		line = line[:len(line)-1]
		if len(line) > 0 && isRegisterTag(line[0]) {
			err = d.textRegister(line)
		} else {
			err = d.textItem(line)
		}
		if err != nil {
			return false, fmt.Errorf("line %d: %w", lineNo, err)
		}
		d.records++
	}
}

func splitFields(line []byte, fields [][]byte) int {
	nf := 0
	for rest := line; len(rest) > 0 && nf < len(fields); {
		var f []byte
		f, rest = nextField(rest)
		if len(f) > 0 {
			fields[nf] = f
			nf++
		}
	}
	return nf
}

func (d *decoder) textItem(line []byte) error {
	var fields [5][]byte
	nf := splitFields(line, fields[:])
	if nf < 3 || nf > 4 || len(fields[0]) != 1 {
		return fmt.Errorf("%q: want TAG FIRST N [CLASS] with TAG one of i, o, f, u", line)
	}
	first, ok := parseInt(fields[1])
	if !ok {
		return fmt.Errorf("%q: bad first item %q (want an integer)", line, fields[1])
	}
	n, ok := parseInt(fields[2])
	if !ok || n <= 0 || n > math.MaxInt32 {
		return fmt.Errorf("%q: bad item count %q (want a positive integer)", line, fields[2])
	}
	class := metricsOK
	if nf > 3 {
		class = classNamed(string(fields[3]))
	}
	var err error
	switch fields[0][0] {
	case tagInvoked:
		err = d.itemInvoked(first, n)
	case tagOK:
		err = d.itemDone(first, n, OK, metricsOK)
	case tagFailed:
		err = d.itemDone(first, n, Failed, class)
	case tagUnknown:
		err = d.itemDone(first, n, Unknown, class)
	default:
		return fmt.Errorf("%q: unknown tag %q (want i, o, f or u)", line, fields[0])
	}
	if err != nil {
		return fmt.Errorf("%q: %w", line, err)
	}
	return nil
}

func (d *decoder) textRegister(line []byte) error {
	var fields [6][]byte
	nf := splitFields(line, fields[:])
	if nf < 4 || nf > 5 || len(fields[0]) != 1 {
		return fmt.Errorf("%q: want TAG KEY VERSION TIME [CLASS] with TAG one of w, x, O, F, U", line)
	}
	key, ok1 := parseInt(fields[1])
	ver, ok2 := parseInt(fields[2])
	t, ok3 := parseInt(fields[3])
	if !ok1 || !ok2 || !ok3 || ver <= 0 || t < 0 {
		return fmt.Errorf("%q: KEY, VERSION (positive) and TIME (microseconds) must be integers", line)
	}
	class := metricsOK
	if nf > 4 {
		class = classNamed(string(fields[4]))
	}
	var err error
	switch fields[0][0] {
	case tagRegWrite:
		err = d.regInvoked(kindRegWrite, key, ver, t)
	case tagRegDelete:
		err = d.regInvoked(kindRegDelete, key, ver, t)
	case tagRegInsert:
		err = d.regInvoked(kindRegInsert, key, ver, t)
	case tagRegOK:
		err = d.regDone(key, true, ver, t, OK, metricsOK)
	case tagRegFailed:
		err = d.regDone(key, true, ver, t, Failed, class)
	default:
		err = d.regDone(key, true, ver, t, Unknown, class)
	}
	if err != nil {
		return fmt.Errorf("%q: %w", line, err)
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
