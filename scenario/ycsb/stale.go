package ycsb

import (
	"bytes"
	"strconv"

	"github.com/scalelab/scalelab/scenario/kit"
)

// Stale reads through a cache. With a cache, every update stamps the
// fields it writes with a version from a counter of the workload (bytes
// stampAt to staleLen of the value: "~c", 16 hex digits, "~"; the audit's
// version, when the audit runs, keeps the bytes before), and the counter
// knows the floor: the highest version such that it and every version
// below it have ended. A session remembers, for the keys it last wrote
// (at most maxWritten of them), the field, the version and the floor when
// the write began. A read of such a key (through the cache, hit or miss)
// is stale when the field holds another version that is at most that
// floor: a value whose write had ended before the session's own write
// began, which a store holding the session's acknowledged write can no
// longer return, so the cache (or a replica) did. Writes that overlap the
// session's own are not counted either way: either order is right.

const (
	// stampAt is where the cache's version starts in a written value.
	stampAt = versionLen
	// staleLen is the shortest field that carries the cache's version;
	// with shorter fields (ycsb.field_length) stale reads are not checked.
	staleLen = stampAt + versionLen
	// maxWritten bounds the keys a session remembers its last write of.
	maxWritten = 4096
)

// lastWrite is a session's last acknowledged write of a key: the field it
// wrote (-1 every field), its version, and the floor when it began.
type lastWrite struct {
	field      int
	ver, floor uint64
}

// putStamp writes version v at val[stampAt:staleLen].
func putStamp(val []byte, v uint64) {
	const hex = "0123456789abcdef"
	b := val[stampAt:staleLen]
	b[0], b[1], b[versionLen-1] = '~', 'c', '~'
	for i := versionLen - 2; i >= 2; i-- {
		b[i] = hex[v&15]
		v >>= 4
	}
}

// stampOf returns the cache's version a value carries, or 0 for a value
// written without one (the loaded records).
func stampOf(val []byte) uint64 {
	if len(val) < staleLen {
		return 0
	}
	b := val[stampAt:staleLen]
	if b[0] != '~' || b[1] != 'c' || b[versionLen-1] != '~' {
		return 0
	}
	v, err := strconv.ParseUint(string(b[2:versionLen-1]), 16, 64)
	if err != nil {
		return 0
	}
	return v
}

// sameValue reports whether v is want but for the versions a write
// stamps into it: the audit's in the first versionLen bytes, the cache's
// in the next.
func sameValue(v, want []byte) bool {
	if len(v) != len(want) {
		return false
	}
	if stampOf(v) != 0 {
		if !bytes.Equal(v[staleLen:], want[staleLen:]) {
			return false
		}
		v, want = v[:stampAt], want[:stampAt]
	}
	if versionOf(v) != 0 {
		return bytes.Equal(v[versionLen:], want[versionLen:])
	}
	return bytes.Equal(v, want)
}

// stampWrite, before an update is sent with a cache, takes the write's
// version and the floor, and stamps the version into every field written.
func (s *Session) stampWrite() {
	vers := s.w.cache.Versions
	if vers == nil {
		return
	}
	s.wfloor = vers.Last()
	s.wver = vers.Take()
	if s.wfield >= 0 {
		putStamp(s.vals[s.wfield], s.wver)
		return
	}
	for _, v := range s.vals {
		putStamp(v, s.wver)
	}
}

// endWrite marks the write in flight ended; acknowledged (ok), it becomes
// the session's last write of the key.
func (s *Session) endWrite(ok bool) {
	vers := s.w.cache.Versions
	if vers == nil {
		return
	}
	vers.Ack(s.wver)
	if !ok {
		return
	}
	kit.Remember(&s.written, s.keynum, lastWrite{field: s.wfield, ver: s.wver, floor: s.wfloor}, maxWritten)
}

// stale reports whether s.full, the record just read of s.key, is older
// than the session's last acknowledged write of the key.
func (s *Session) stale() bool {
	lw, ok := s.written[s.keynum]
	if !ok {
		return false
	}
	v := stampOf(s.full[max(lw.field, 0)])
	return v != lw.ver && v <= lw.floor
}
