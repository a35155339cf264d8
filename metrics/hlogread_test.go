package metrics

import "testing"

func TestAddCounts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		payload []byte
		want    []int64
		err     bool
	}{
		{"counts", []byte{2, 4, 6}, []int64{1, 2, 3, 0}, false},
		{"zero run", []byte{2, 3, 2}, []int64{1, 0, 0, 1}, false},            // 3 = zig-zag -2
		{"two-byte number", []byte{0x80, 0x01}, []int64{64, 0, 0, 0}, false}, // 128 = zig-zag 64
		{"truncated", []byte{0x80}, nil, true},
		{"run past end", []byte{9}, nil, true},
		{"count past end", []byte{2, 2, 2, 2, 2}, nil, true},
	} {
		counts := make([]int64, 4)
		err := addCounts(counts, tc.payload)
		if (err != nil) != tc.err {
			t.Errorf("%s: err %v", tc.name, err)
			continue
		}
		if err == nil {
			for i := range tc.want {
				if counts[i] != tc.want[i] {
					t.Errorf("%s: counts %v, want %v", tc.name, counts, tc.want)
					break
				}
			}
		}
	}
}
