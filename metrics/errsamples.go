package metrics

import (
	"regexp"
	"sync"
	"sync/atomic"
)

// MaxErrorSamples is how many distinct error messages are kept per
// operation: enough to say what the store said, without a cost when a
// store fails every request.
const MaxErrorSamples = 5

// maxErrorText bounds one kept message.
const maxErrorText = 300

// errorSamples keeps the first distinct error messages of each operation.
// Only the error path calls it, and once an operation has its samples a
// single atomic load turns later errors away.
type errorSamples struct {
	full []atomic.Bool
	mu   sync.Mutex
	msgs [][]string
}

func newErrorSamples(nops int) *errorSamples {
	return &errorSamples{full: make([]atomic.Bool, nops), msgs: make([][]string, nops)}
}

var (
	// scheme://[user]:password@ up to the last @ of the user info (a
	// password may hold an unencoded @; a path cannot be in it)
	urlPassword = regexp.MustCompile(`(\w+://[^:/@\s]*:)[^\s/]*@`)
	// password=x, secret="x y", token=x; not "password: ...", which in a
	// Go error chain names what failed ("seed password: bcrypt: ...")
	kvPassword = regexp.MustCompile(`(?i)((?:password|passwd|pwd|secret|token)\s*=\s*)("[^"]*"|'[^']*'|\S+)`)
)

// Redact removes passwords from an error message (URL user info and
// password=... pairs), so that no secret reaches run.json or a report.
func Redact(msg string) string {
	msg = urlPassword.ReplaceAllString(msg, "${1}REDACTED@")
	return kvPassword.ReplaceAllString(msg, "${1}REDACTED")
}

func (e *errorSamples) note(op int, err error) {
	if e.full[op].Load() {
		return
	}
	msg := Redact(err.Error())
	if len(msg) > maxErrorText {
		msg = msg[:maxErrorText] + "..."
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, m := range e.msgs[op] {
		if m == msg {
			return
		}
	}
	e.msgs[op] = append(e.msgs[op], msg)
	if len(e.msgs[op]) >= MaxErrorSamples {
		e.full[op].Store(true)
	}
}

// NoteError keeps err's message as a sample of operation op's errors (the
// first MaxErrorSamples distinct ones, passwords redacted).
func (c *Collector) NoteError(op int, err error) {
	if err != nil {
		c.errs.note(op, err)
	}
}

// ErrorSamples returns the kept error messages of each operation.
func (c *Collector) ErrorSamples() [][]string {
	c.errs.mu.Lock()
	defer c.errs.mu.Unlock()
	out := make([][]string, len(c.errs.msgs))
	for i, m := range c.errs.msgs {
		out[i] = append([]string(nil), m...)
	}
	return out
}
