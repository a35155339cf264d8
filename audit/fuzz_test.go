package audit

import (
	"bytes"
	"testing"
)

// FuzzRead: the history reader never panics, and whatever it accepts
// counts consistently (every item in exactly one outcome).
func FuzzRead(f *testing.F) {
	f.Add([]byte(Header + "\ni 1 1\no 1 1\ni 2 5\nu 2 5 timeout\ni 7 1\n"))
	f.Add([]byte(Header + "\ni 1 1\nf 1 1 rejected\ni 3 2\no 3"))
	f.Add([]byte(Header + "\no 1 1\n"))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		c := h.Counts()
		if c.OK+c.Failed+c.Unknown+c.InFlight != c.Attempted {
			t.Fatalf("counts %+v do not add up", c)
		}
		if a := Summarize(h); a.Acknowledged+a.Failed+a.Unknown != a.Attempted {
			t.Fatalf("summary %+v does not add up", a)
		}
	})
}
