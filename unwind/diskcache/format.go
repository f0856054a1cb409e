package diskcache

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/unwind"
)

// Magic starts a cache file; FileVersion is the version of its layout
// (doc.go). A file of another FileVersion, unwind.FormatVersion or
// unwind.BuilderVersion is stale: never read, rebuilt and overwritten.
const (
	Magic       = "PROBEETC"
	FileVersion = 1
)

const (
	headerSize  = 24 // magic, three versions, key length
	segmentSize = 36 // vaddr, offset, filesz, memsz u64; flags u32
	nstats      = 8  // the Stats counts, u64 each
	crcSize     = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errStale is a file another probee wrote in another format: not an error
// to warn about.
var errStale = errors.New("written by another version of probee")

// encode returns the cache file of t under key, in two pieces to write one
// after the other: what precedes the table (header, key, segments, stats,
// table length) with the table, and the checksum.
func encode(key string, t *unwind.Table) (head, table, sum []byte, err error) {
	table, err = t.MarshalBinary()
	if err != nil {
		return nil, nil, nil, err
	}
	le := binary.LittleEndian
	head = append(head, Magic...)
	for _, v := range []uint32{FileVersion, unwind.FormatVersion, unwind.BuilderVersion, uint32(len(key))} {
		head = le.AppendUint32(head, v)
	}
	head = append(head, key...)
	head = le.AppendUint32(head, uint32(len(t.Loads)))
	for _, s := range t.Loads {
		for _, v := range []uint64{s.Vaddr, s.Offset, s.Filesz, s.Memsz} {
			head = le.AppendUint64(head, v)
		}
		head = le.AppendUint32(head, uint32(s.Flags))
	}
	for _, v := range statCounts(&t.Stats) {
		head = le.AppendUint64(head, uint64(*v))
	}
	head = le.AppendUint32(head, uint32(len(t.Stats.FirstError)))
	head = append(head, t.Stats.FirstError...)
	head = le.AppendUint64(head, uint64(len(table)))
	crc := crc32.Update(crc32.Checksum(head, castagnoli), castagnoli, table)
	return head, table, le.AppendUint32(nil, crc), nil
}

func statCounts(s *unwind.Stats) [nstats]*int {
	return [nstats]*int{&s.FDEs, &s.Rows, &s.PLTRows, &s.SignalRows, &s.EndRows, &s.Unsupported, &s.BadFDEs, &s.Overlaps}
}

// decode reads the cache file data saved under key. A file of another
// version gives errStale; any other error means the file is corrupt.
func decode(key string, data []byte) (*unwind.Table, error) {
	le := binary.LittleEndian
	if len(data) < headerSize+crcSize || string(data[:len(Magic)]) != Magic {
		return nil, errors.New("not a probee table cache file (bad magic or truncated)")
	}
	if le.Uint32(data[8:]) != FileVersion || le.Uint32(data[12:]) != unwind.FormatVersion || le.Uint32(data[16:]) != unwind.BuilderVersion {
		return nil, errStale
	}
	body := data[:len(data)-crcSize]
	if want, got := le.Uint32(data[len(body):]), crc32.Checksum(body, castagnoli); want != got {
		return nil, fmt.Errorf("checksum mismatch (%#08x in the file, %#08x computed): truncated or damaged", want, got)
	}
	return decodeBody(key, body)
}

// decodeBody decodes a file whose version and checksum are right (body
// excludes the checksum).
func decodeBody(key string, body []byte) (*unwind.Table, error) {
	r := &reader{buf: body, pos: headerSize - 4}
	if got := string(r.bytes(uint64(r.u32()))); got != key {
		return nil, fmt.Errorf("holds the table of %q, not %q", got, key)
	}
	t := &unwind.Table{}
	n := uint64(r.u32())
	if n > uint64(r.left())/segmentSize {
		return nil, fmt.Errorf("%d segments: more than the file holds", n)
	}
	t.Loads = make([]safeelf.Segment, n)
	for i := range t.Loads {
		s := &t.Loads[i]
		s.Vaddr, s.Offset, s.Filesz, s.Memsz = r.u64(), r.u64(), r.u64(), r.u64()
		s.Flags = elf.ProgFlag(r.u32())
	}
	for _, v := range statCounts(&t.Stats) {
		*v = int(r.u64())
	}
	t.Stats.FirstError = string(r.bytes(uint64(r.u32())))
	table := r.bytes(r.u64())
	if r.err || r.left() != 0 {
		return nil, errors.New("sizes do not match the file's")
	}
	if err := t.UnmarshalBinary(table); err != nil {
		return nil, err
	}
	return t, nil
}
