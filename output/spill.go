package output

import (
	"bufio"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Spill keeps the merged samples of a long run on disk, so that the
// memory of a run that merges the samples of exited processes (Merged)
// stays flat while the distinct stacks keep coming: a system-wide run
// with ~350 new processes a second made 143,927 distinct lines in 10
// minutes, ~400 bytes each in memory (the merged count, its frames
// interned by address, its tree nodes) and RSS grew with them. Spill.Add
// writes a Merged's samples to the file and empties it; the caller then
// starts its Interner afresh (nothing references the old one). In memory
// stays a hash and the totals of each distinct sample spilled (~40
// bytes): a sample spilled before adds its counts there and is not
// written again, so the file grows with the distinct samples only. Load
// reads them all back into the final profile's Merged at the end.
//
// The file is unnamed (O_TMPFILE; else created with O_EXCL and removed at
// once), 0600, in the directory given (the temp directory), so no other
// process can open it by name and it is gone with probee. Each Add writes
// one chunk: its strings, frames and groups are written once and then
// referenced by number. A failed write (a full disk) is cut off the file
// and leaves the samples in memory. Samples whose 64-bit hashes collide
// (about 1 in 10^7 runs of 1M distinct stacks) are counted as one. Not
// safe for concurrent use.
type Spill struct {
	f      *os.File
	end    int64 // bytes of whole chunks
	seed   maphash.Seed
	seen   map[uint64]uint32 // a spilled sample's hash -> its totals
	totals []spillTotals     // by record, in the order written
}

// spillTotals are a spilled sample's counts.
type spillTotals struct{ count, value uint64 }

// OpenSpill opens an empty Spill in dir.
func OpenSpill(dir string) (*Spill, error) {
	f, err := openUnnamed(dir)
	if err != nil {
		return nil, fmt.Errorf("open a spill file in %s: %w", dir, err)
	}
	return &Spill{f: f, seed: maphash.MakeSeed(), seen: map[uint64]uint32{}}, nil
}

// openUnnamed opens a new file in dir that no path names.
func openUnnamed(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err == nil {
		return os.NewFile(uintptr(fd), filepath.Join(dir, "(probee spill)")), nil
	}
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EINVAL) {
		return nil, err
	}
	f, err := os.CreateTemp(dir, ".probee-spill-*") // O_EXCL, 0600
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return f, nil
}

// Len is the number of distinct samples spilled.
func (sp *Spill) Len() int { return len(sp.totals) }

// Bytes is the size of the file.
func (sp *Spill) Bytes() int64 { return sp.end }

// Close closes the file (and so removes it).
func (sp *Spill) Close() error { return sp.f.Close() }

// Add moves m's samples to sp and empties m (see Spill); m's Full then
// counts those spilled. On an error m and sp are as they were.
func (sp *Spill) Add(m *Merged) error {
	hashes := sp.hashes(m)
	var fresh []int // indexes into m.counts of the samples not spilled yet
	first := map[uint64]bool{}
	for i, h := range hashes {
		if _, ok := sp.seen[h]; !ok && !first[h] {
			first[h] = true
			fresh = append(fresh, i)
		}
	}
	if len(fresh) > 0 {
		if err := sp.write(m, fresh); err != nil {
			sp.f.Truncate(sp.end)
			return fmt.Errorf("spill %d samples to disk: %w", len(fresh), err)
		}
	}
	for _, i := range fresh {
		sp.seen[hashes[i]] = uint32(len(sp.totals))
		sp.totals = append(sp.totals, spillTotals{})
	}
	for i, h := range hashes {
		t := &sp.totals[sp.seen[h]]
		t.count += m.counts[i].count
		t.value += m.counts[i].value
	}
	m.reset(len(sp.totals))
	return nil
}

// write appends one chunk of m's samples fresh to the file.
func (sp *Spill) write(m *Merged, fresh []int) error {
	ow := io.NewOffsetWriter(sp.f, sp.end)
	w := newSpillWriter(bufio.NewWriterSize(ow, 64<<10))
	w.uint(uint64(len(fresh)))
	for _, i := range fresh {
		c := &m.counts[i]
		g := &m.groups[c.key.group]
		w.group(c.key.group, g)
		w.stack(Stack{g.user, c.key.user})
		w.stack(Stack{g.kernel, c.key.kernel})
	}
	if err := w.w.Flush(); err != nil {
		return err
	}
	n, _ := ow.Seek(0, io.SeekCurrent)
	sp.end += n
	return nil
}

// hashes are the hashes of m's samples, by what names them: probe,
// comm, pid, container and the frames of both stacks.
func (sp *Spill) hashes(m *Merged) []uint64 {
	memo := map[*Frame]uint64{}
	frameHash := func(f *Frame) uint64 {
		h, ok := memo[f]
		if !ok {
			h = maphash.Comparable(sp.seed, *f)
			memo[f] = h
		}
		return h
	}
	var h maphash.Hash
	h.SetSeed(sp.seed)
	var frames []*Frame
	out := make([]uint64, len(m.counts))
	for i, c := range m.counts {
		g := &m.groups[c.key.group]
		h.Reset()
		maphash.WriteComparable(&h, groupKey{g.probe, g.comm, g.pid, g.container.ID, g.container.Cgroup})
		for _, s := range []Stack{{g.user, c.key.user}, {g.kernel, c.key.kernel}} {
			frames = s.Append(frames[:0])
			maphash.WriteComparable(&h, len(frames))
			for _, f := range frames {
				maphash.WriteComparable(&h, frameHash(f))
			}
		}
		out[i] = h.Sum64()
	}
	return out
}

// groupKey is what a merge group names but its stacks.
type groupKey struct {
	probe, comm string
	pid         int
	id, cgroup  string
}

// Load adds the spilled samples to m, interning their frames and stacks
// in fs, and returns the counts m left out (past its Max). The file
// stays; Load again reads it again.
func (sp *Spill) Load(m *Merged, fs *Interner) (over uint64, err error) {
	m.spilled = 0
	r := newSpillReader(bufio.NewReaderSize(io.NewSectionReader(sp.f, 0, sp.end), 64<<10), sp.end, fs)
	k := 0
	for r.more() {
		n := r.uint()
		if r.err == nil && n > uint64(len(sp.totals)-k) {
			r.fail("a chunk of %d samples past the %d spilled", n, len(sp.totals))
		}
		r.reset()
		for range n {
			s := r.sample()
			if r.err != nil {
				break
			}
			s.Count, s.Value = sp.totals[k].count, sp.totals[k].value
			k++
			if !m.Add(s) {
				over += s.Count
			}
		}
		if r.err != nil {
			return over, fmt.Errorf("read the spill file: %w", r.err)
		}
	}
	if k != len(sp.totals) {
		return over, fmt.Errorf("read the spill file: %d samples of %d", k, len(sp.totals))
	}
	return over, nil
}
