package audit

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"github.com/klauspost/compress/zstd"

	"github.com/scalelab/scalelab/metrics"
)

// The binary history (v3). After the header line come blocks, each
// written whole by one write call:
//
//	uvarint LEN | 4 bytes CRC-32C of the LEN bytes, little endian | LEN bytes: the payload, compressed as one zstd frame
//
// A block that ends early or whose checksum does not match is the torn
// tail of a dying process when nothing follows it, and an error otherwise.
// The payload is a sequence of records; each starts with a tag byte whose
// low 4 bits are the kind and high 4 bits the error class of a failed or
// unknown outcome:
//
//	item invoked   FIRST N       the write of items FIRST..FIRST+N-1 is about to be sent
//	item ok        FIRST N       it was acknowledged
//	item failed    FIRST N       it failed and is known not applied
//	item unknown   FIRST N       its outcome is unknown
//	reg write      KEY VER T     a write of version VER to register KEY, invoked at T
//	reg delete     KEY VER T     a delete of register KEY (numbered VER), invoked at T
//	reg insert     KEY VER T     a write creating register KEY, invoked at T
//	reg ok         VER T         the write numbered VER was acknowledged at T
//	reg failed     VER T         it failed and is known not applied
//	reg unknown    VER T         its outcome is unknown
//
// FIRST, VER and T (microseconds since the history began) are zigzag
// varints of the difference from the same field of the block's previous
// record (0 before the first), KEY a zigzag varint, N an uvarint. A
// register's outcome names only its version: its key and invocation time
// are those of its invocation, earlier in the file (a session's
// invocation always precedes its outcome, and both go to the same shard).
const (
	kindItemInvoked = 1 + iota
	kindItemOK
	kindItemFailed
	kindItemUnknown
	kindRegWrite
	kindRegDelete
	kindRegInsert
	kindRegOK
	kindRegFailed
	kindRegUnknown
)

// HeaderV3 is the first line of a binary history file.
const HeaderV3 = "# scalelab write history v3 binary"

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// deltas is the per-block state of the delta-coded fields.
type deltas struct {
	first, ver, t int64
}

func appendZig(b []byte, v int64) []byte { return binary.AppendUvarint(b, uint64(v<<1)^uint64(v>>63)) }

func appendItemRec(b []byte, d *deltas, kind byte, class metrics.Class, first int64, n int) []byte {
	b = append(b, kind|byte(class)<<4)
	b = appendZig(b, first-d.first)
	d.first = first
	return binary.AppendUvarint(b, uint64(n))
}

func appendRegInv(b []byte, d *deltas, kind byte, key, ver, t int64) []byte {
	b = append(b, kind)
	b = appendZig(b, key)
	b = appendZig(b, ver-d.ver)
	b = appendZig(b, t-d.t)
	d.ver, d.t = ver, t
	return b
}

func appendRegOut(b []byte, d *deltas, kind byte, class metrics.Class, ver, t int64) []byte {
	b = append(b, kind|byte(class)<<4)
	b = appendZig(b, ver-d.ver)
	b = appendZig(b, t-d.t)
	d.ver, d.t = ver, t
	return b
}

// frame returns the block header of a compressed payload.
func frame(hdr []byte, packed []byte) []byte {
	hdr = binary.AppendUvarint(hdr[:0], uint64(len(packed)))
	return binary.LittleEndian.AppendUint32(hdr, crc32.Checksum(packed, crcTable))
}

// newCompressor is the block compressor: zstd's fastest level (a few
// percent of a core at a million writes a second; a block shrinks about
// threefold).
func newCompressor() *zstd.Encoder {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithLowerEncoderMem(true), zstd.WithEncoderCRC(false))
	if err != nil {
		panic(fmt.Sprintf("zstd encoder: %v", err)) // only bad options fail
	}
	return enc
}

// maxPayload bounds a block's payload once decompressed.
const maxPayload = 64 << 20

func newDecompressor() *zstd.Decoder {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxPayload), zstd.WithDecoderLowmem(true))
	if err != nil {
		panic(fmt.Sprintf("zstd decoder: %v", err)) // only bad options fail
	}
	return dec
}

// decoder turns history records into completed writes: a write is passed
// on when its outcome is read, and the writes still in flight when the
// history ends are passed on by finish with the outcome Invoked. It keeps
// only the writes in flight.
type decoder struct {
	span    func(Span)
	reg     func(RegWrite)
	items   map[int64]int32   // first item -> count of an invoked item write
	regs    map[int64]openReg // version -> an invoked register write of an earlier block
	recent  []recentReg       // the register invocations of the block being decoded
	maxVer  int64
	records int64
}

type openReg struct {
	key, inv int64
	kind     byte
}

// recentReg is a register invocation of the block being decoded: its
// outcome most often follows a few records later (a shard holds the
// records of a few sessions, each with one operation in flight), so it is
// looked for among these before the map of older ones.
type recentReg struct {
	ver int64
	openReg
	done bool
}

// recentScan is how far back the outcome of a register write looks for
// its invocation among the block's records.
// maxRecent bounds the others, looked for only when that fails.
const (
	recentScan = 64
	maxRecent  = 1024
)

func newDecoder(span func(Span), reg func(RegWrite)) *decoder {
	return &decoder{span: span, reg: reg, items: map[int64]int32{}, regs: map[int64]openReg{}}
}

func (d *decoder) itemInvoked(first int64, n int64) error {
	if n <= 0 || n > math.MaxInt32 {
		return fmt.Errorf("bad item count %d (want a positive integer)", n)
	}
	if _, dup := d.items[first]; dup {
		return fmt.Errorf("item %d invoked twice without an outcome", first)
	}
	d.items[first] = int32(n)
	return nil
}

func (d *decoder) itemDone(first, n int64, out Outcome, class metrics.Class) error {
	m, ok := d.items[first]
	if !ok || int64(m) != n {
		return fmt.Errorf("outcome of items %d..%d that were not invoked", first, first+n-1)
	}
	delete(d.items, first)
	d.span(Span{First: first, N: m, Outcome: out, Class: class})
	return nil
}

func (d *decoder) regInvoked(kind byte, key, ver, t int64) error {
	if ver <= 0 || t < 0 {
		return fmt.Errorf("register %d: version %d (want positive), time %d (want at least 0)", key, ver, t)
	}
	if len(d.recent) >= maxRecent {
		d.endBlock()
	}
	// versions are unique by construction: a duplicate is a damaged
	// file, looked for among the writes in flight of earlier blocks and
	// the last few of this one
	_, dup := d.regs[ver]
	for i := len(d.recent) - 1; i >= max(0, len(d.recent)-8) && !dup; i-- {
		dup = d.recent[i].ver == ver && !d.recent[i].done
	}
	if dup {
		return fmt.Errorf("version %d invoked twice", ver)
	}
	d.recent = append(d.recent, recentReg{ver: ver, openReg: openReg{key: key, inv: t, kind: kind}})
	d.maxVer = max(d.maxVer, ver)
	return nil
}

// endBlock moves the block's invocations still without an outcome to the
// map of older ones.
func (d *decoder) endBlock() {
	for _, r := range d.recent {
		if !r.done {
			d.regs[r.ver] = r.openReg
		}
	}
	d.recent = d.recent[:0]
}

func (d *decoder) regDone(key int64, keyKnown bool, ver, t int64, out Outcome, class metrics.Class) error {
	var o openReg
	found := false
	for i := len(d.recent) - 1; i >= max(0, len(d.recent)-recentScan); i-- {
		if r := &d.recent[i]; r.ver == ver && !r.done {
			o, found, r.done = r.openReg, true, true
			break
		}
	}
	if !found {
		o, found = d.regs[ver]
		if found {
			delete(d.regs, ver)
		} else {
			for i := len(d.recent) - recentScan - 1; i >= 0 && !found; i-- {
				if r := &d.recent[i]; r.ver == ver && !r.done {
					o, found, r.done = r.openReg, true, true
				}
			}
		}
	}
	if !found || (keyKnown && o.key != key) {
		return fmt.Errorf("outcome of register version %d that was not invoked", ver)
	}
	r := RegWrite{Key: o.key, Version: ver, Inv: o.inv, End: math.MaxInt64, Delete: o.kind == kindRegDelete, Insert: o.kind == kindRegInsert, Outcome: out, Class: class}
	if out != Unknown { // an unknown write may take effect at any time
		r.End = max(t, o.inv)
	}
	d.reg(r)
	return nil
}

// finish passes on the writes still in flight (no outcome recorded).
func (d *decoder) finish() {
	d.endBlock()
	for first, n := range d.items {
		d.span(Span{First: first, N: n, Outcome: Invoked})
	}
	clear(d.items)
	for ver, o := range d.regs {
		d.reg(RegWrite{Key: o.key, Version: ver, Inv: o.inv, End: math.MaxInt64, Delete: o.kind == kindRegDelete, Insert: o.kind == kindRegInsert, Outcome: Invoked})
	}
	clear(d.regs)
}

var errShort = errors.New("record ends early")

// payload decodes one block's records.
func (d *decoder) payload(p []byte) error {
	defer d.endBlock()
	var dl deltas
	zig := func() (int64, error) {
		u, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, errShort
		}
		p = p[n:]
		return int64(u>>1) ^ -int64(u&1), nil
	}
	// verTime reads a register record's version and time deltas into dl.
	verTime := func() error {
		dv, err := zig()
		if err != nil {
			return err
		}
		dt, err := zig()
		if err != nil {
			return err
		}
		dl.ver += dv
		dl.t += dt
		return nil
	}
	for len(p) > 0 {
		tag := p[0]
		p = p[1:]
		kind, class := tag&0x0f, metrics.Class(tag>>4)
		if class >= metrics.NumClasses {
			class = metrics.Other
		}
		var err error
		switch kind {
		case kindItemInvoked, kindItemOK, kindItemFailed, kindItemUnknown:
			var df int64
			if df, err = zig(); err != nil {
				return err
			}
			first := dl.first + df
			dl.first = first
			u, n := binary.Uvarint(p)
			if n <= 0 || u > math.MaxInt32 {
				return errShort
			}
			p = p[n:]
			switch kind {
			case kindItemInvoked:
				err = d.itemInvoked(first, int64(u))
			case kindItemOK:
				err = d.itemDone(first, int64(u), OK, metrics.OK)
			case kindItemFailed:
				err = d.itemDone(first, int64(u), Failed, class)
			default:
				err = d.itemDone(first, int64(u), Unknown, class)
			}
		case kindRegWrite, kindRegDelete, kindRegInsert:
			var key int64
			if key, err = zig(); err == nil {
				err = verTime()
			}
			if err != nil {
				return err
			}
			err = d.regInvoked(kind, key, dl.ver, dl.t)
		case kindRegOK, kindRegFailed, kindRegUnknown:
			if err = verTime(); err != nil {
				return err
			}
			out := Unknown
			switch kind {
			case kindRegOK:
				out, class = OK, metrics.OK
			case kindRegFailed:
				out = Failed
			}
			err = d.regDone(0, false, dl.ver, dl.t, out, class)
		default:
			return fmt.Errorf("unknown record kind %d", kind)
		}
		if err != nil {
			return err
		}
		d.records++
	}
	return nil
}

// readBinary decodes the blocks of a binary history after its header
// line. A last block cut short or failing its checksum is a torn tail
// (torn true); any other bad block is an error naming its offset.
func (d *decoder) readBinary(br *bufio.Reader, offset int64) (torn bool, err error) {
	var buf, plain []byte
	unz := newDecompressor()
	defer unz.Close()
	for {
		start := offset
		n, err := binary.ReadUvarint(br)
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return true, nil
			}
			return false, fmt.Errorf("block at byte %d: bad length: %w", start, err)
		}
		if n == 0 {
			// a tail of zeros: the file system extended the file
			// before the data reached it
			return true, nil
		}
		if n > 1<<30 {
			return false, fmt.Errorf("block at byte %d: length %d is not plausible", start, n)
		}
		var sum [4]byte
		if _, err := io.ReadFull(br, sum[:]); err != nil {
			return true, nil
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(br, buf); err != nil {
			return true, nil
		}
		offset += int64(binary.PutUvarint(make([]byte, binary.MaxVarintLen64), n)) + 4 + int64(n)
		if crc32.Checksum(buf, crcTable) != binary.LittleEndian.Uint32(sum[:]) {
			if _, err := br.Peek(1); err == io.EOF {
				return true, nil
			}
			return false, fmt.Errorf("block at byte %d: checksum mismatch", start)
		}
		if plain, err = unz.DecodeAll(buf, plain[:0]); err != nil {
			return false, fmt.Errorf("block at byte %d: %w", start, err)
		}
		if err := d.payload(plain); err != nil {
			return false, fmt.Errorf("block at byte %d: %w", start, err)
		}
	}
}
