package memory

import (
	"context"
	"fmt"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/setting"
)

func TestParseDropAcked(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		k, n int64
		ok   bool
	}{
		{"0", 0, 0, true}, {"1/1000", 1, 1000, true}, {" 3 / 7 ", 3, 7, true}, {"1/1", 1, 1, true}, {"0/5", 0, 5, true},
		{"5", 0, 0, false}, {"2/1", 0, 0, false}, {"1/0", 0, 0, false}, {"-1/5", 0, 0, false}, {"a/b", 0, 0, false}, {"1/", 0, 0, false},
	} {
		k, n, err := ParseDropAcked(c.in)
		if (err == nil) != c.ok || k != c.k || n != c.n {
			t.Errorf("ParseDropAcked(%q) = %d, %d, %v", c.in, k, n, err)
		}
	}
}

// TestDropAcked: with 1/1000, inserts and puts number 1000, 2000, ... are
// acknowledged but not stored; with 3/7, exactly 3 of every 7.
func TestDropAcked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		spec   string
		writes int
		want   []int // 1-based numbers of the dropped writes
	}{
		{"1/1000", 2500, []int{1000, 2000}},
		{"3/7", 14, []int{3, 5, 7, 10, 12, 14}},
	} {
		set := setting.NewSet((&Engine{}).Settings()...)
		if err := set.Apply(KeyDropAcked + "=" + c.spec); err != nil {
			t.Fatal(err)
		}
		ec, err := (&Engine{}).Open(ctx, engine.Config{Settings: set})
		if err != nil {
			t.Fatal(err)
		}
		conn := ec.(*Conn)
		var dropped []int
		for i := 1; i <= c.writes; i++ {
			key := fmt.Sprint("k", i)
			var err error
			if i%2 == 0 {
				err = conn.Put(ctx, key, Record{"f": []byte("v")})
			} else {
				err = conn.Insert(ctx, key, Record{"f": []byte("v")})
			}
			if err != nil {
				t.Fatalf("%s: write %d: %v (a dropped write is still acknowledged)", c.spec, i, err)
			}
			if !conn.Has(key) {
				dropped = append(dropped, i)
			}
		}
		if fmt.Sprint(dropped) != fmt.Sprint(c.want) || conn.DroppedAcked() != int64(len(c.want)) {
			t.Errorf("%s: dropped %v (counter %d), want %v", c.spec, dropped, conn.DroppedAcked(), c.want)
		}
		// A failed insert (the key exists) is not counted.
		before := conn.DroppedAcked()
		if err := conn.Insert(ctx, "k1", Record{}); err == nil {
			t.Errorf("%s: insert of an existing key succeeded", c.spec)
		}
		if conn.DroppedAcked() != before {
			t.Errorf("%s: a failed insert counted as a write", c.spec)
		}
	}
}
