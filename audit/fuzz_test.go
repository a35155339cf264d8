package audit

import (
	"bytes"
	"testing"
)

// FuzzRead: the history reader (binary and text) never panics, and
// whatever it accepts counts consistently (every item in exactly one
// outcome, every register write in one).
func FuzzRead(f *testing.F) {
	f.Add([]byte(headerV2 + "\ni 1 1\no 1 1\ni 2 5\nu 2 5 timeout\ni 7 1\n"))
	f.Add([]byte(headerV2 + "\ni 1 1\nf 1 1 rejected\ni 3 2\no 3"))
	f.Add([]byte(headerV2 + "\no 1 1\nw 4 1 10\nO 4 1 12\nx 4 2 13\n"))
	f.Add([]byte("garbage"))
	var d deltas
	p := appendItemRec(nil, &d, kindItemInvoked, 0, 1, 1)
	p = appendItemRec(p, &d, kindItemOK, 0, 1, 1)
	p = appendRegInv(p, &d, kindRegWrite, 7, 100, 5)
	p = appendRegInv(p, &d, kindRegDelete, 8, 101, 6)
	p = appendRegOut(p, &d, kindRegOK, 0, 100, 9)
	p = appendRegOut(p, &d, kindRegUnknown, 1, 101, 9)
	f.Add(append([]byte(Header+"\n"), block(p)...))
	f.Add(append([]byte(Header+"\n"), block(p)[:len(p)/2]...))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		c := h.Counts()
		if c.OK+c.Failed+c.Unknown+c.InFlight != c.Attempted {
			t.Fatalf("counts %+v do not add up", c)
		}
		a := Summarize(h)
		if a.Acknowledged+a.Failed+a.Unknown != a.Attempted {
			t.Fatalf("summary %+v does not add up", a)
		}
		if g := a.Registers; g != nil && g.Acknowledged+g.Failed+g.Unknown != g.Writes {
			t.Fatalf("register summary %+v does not add up", g)
		}
	})
}
