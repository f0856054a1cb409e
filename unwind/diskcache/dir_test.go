package diskcache

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/unwind"
)

// sampleTable is a small valid table with segments and stats.
func sampleTable(n int) *unwind.Table {
	t := &unwind.Table{
		Base:  0x1000,
		Rules: []unwind.Rule{{}, {CFA: unwind.CFARSP, CFAOffset: 8}, {CFA: unwind.CFARBP, CFAOffset: 16, RBP: unwind.RBPOffset, RBPOffset: -16}},
		Loads: []safeelf.Segment{{Vaddr: 0, Offset: 0, Filesz: 0x800, Memsz: 0x800, Flags: elf.PF_R},
			{Vaddr: 0x1000, Offset: 0x1000, Filesz: 0x4000, Memsz: 0x4000, Flags: elf.PF_R | elf.PF_X}},
		Stats: unwind.Stats{FDEs: 2, Rows: 5, EndRows: 1, BadFDEs: 1, FirstError: "FDE at 0x40: bad"},
	}
	for i := range n {
		t.Entries = append(t.Entries, unwind.Entry{PCLow: uint16(i * 16), Rule: uint16(1 + i%2)})
	}
	t.Entries = append(t.Entries, unwind.Entry{PCLow: uint16(n * 16)})
	t.Pages = []uint32{0, uint32(len(t.Entries))}
	return t
}

// log collects a Dir's warnings and debug lines.
type log struct {
	mu           sync.Mutex
	warns, debug []string
}

func (l *log) warnf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.warns = append(l.warns, fmt.Sprintf(format, args...))
}

func (l *log) debugf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.debug = append(l.debug, fmt.Sprintf(format, args...))
}

func open(t *testing.T, max int64) (*Dir, *log) {
	t.Helper()
	l := &log{}
	d, err := Open(filepath.Join(t.TempDir(), "probee", "unwind"), Options{MaxBytes: max, Warnf: l.warnf, Debugf: l.debugf})
	if err != nil {
		t.Fatal(err)
	}
	return d, l
}

func save(d *Dir, key string, t *unwind.Table) {
	d.Save(key, t)
	d.Wait()
}

// A saved table loads back as it was, segments and stats included; a key
// never saved is a quiet miss; the directory is private.
func TestSaveLoad(t *testing.T) {
	d, l := open(t, 0)
	want := sampleTable(3)
	save(d, "b-0a1b", want)
	got, ok := d.Load("b-0a1b")
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded %+v, %v; want %+v", got, ok, want)
	}
	if _, ok := d.Load("b-ffff"); ok {
		t.Error("a key never saved was found")
	}
	if fi, err := os.Stat(d.Path()); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("directory %v (%v), want mode 0700", fi.Mode(), err)
	}
	if fi, err := os.Stat(d.File("b-0a1b")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v (%v), want 0600", fi.Mode(), err)
	}
	if len(l.warns)+len(l.debug) > 0 {
		t.Errorf("warnings %q, debug %q; want none", l.warns, l.debug)
	}
}

// rewrite changes the file of key with edit, and, with fixCRC, stores the
// checksum of the edited file (so that what is checked past it is reached).
func rewrite(t *testing.T, d *Dir, key string, fixCRC bool, edit func([]byte) []byte) {
	t.Helper()
	data, err := os.ReadFile(d.File(key))
	if err != nil {
		t.Fatal(err)
	}
	data = edit(data)
	if fixCRC {
		n := len(data) - crcSize
		binary.LittleEndian.PutUint32(data[n:], crc32.Checksum(data[:n], castagnoli))
	}
	if err := os.WriteFile(d.File(key), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A file of another file, encoding or builder version is ignored without
// a warning (one debug line), and overwritten by the next save.
func TestStale(t *testing.T) {
	for _, c := range []struct {
		name string
		off  int
	}{{"file version", 8}, {"table encoding", 12}, {"builder", 16}} {
		t.Run(c.name, func(t *testing.T) {
			d, l := open(t, 0)
			save(d, "b-01", sampleTable(2))
			rewrite(t, d, "b-01", true, func(b []byte) []byte {
				binary.LittleEndian.PutUint32(b[c.off:], binary.LittleEndian.Uint32(b[c.off:])+1)
				return b
			})
			if _, ok := d.Load("b-01"); ok {
				t.Fatal("stale file used")
			}
			if len(l.warns) != 0 || len(l.debug) != 1 || !strings.Contains(l.debug[0], "another version") {
				t.Errorf("warnings %q, debug %q; want one debug line", l.warns, l.debug)
			}
			save(d, "b-01", sampleTable(2))
			if _, ok := d.Load("b-01"); !ok {
				t.Error("not loaded once saved again")
			}
		})
	}
}

// A truncated or damaged file, or one holding another key's table, is
// refused with one warning naming it, and rewritten by the next save.
func TestCorrupt(t *testing.T) {
	flip := func(off int) func([]byte) []byte {
		return func(b []byte) []byte {
			if off < 0 {
				off += len(b)
			}
			b[off] ^= 0x40
			return b
		}
	}
	cut := func(n int) func([]byte) []byte {
		return func(b []byte) []byte {
			if n < 0 {
				n += len(b)
			}
			return b[:n]
		}
	}
	for _, c := range []struct {
		name   string
		fixCRC bool
		edit   func([]byte) []byte
		want   string
	}{
		{"empty", false, cut(0), "truncated"},
		{"header only", false, cut(headerSize), "truncated"},
		{"half", false, cut(-60), "checksum mismatch"},
		{"last byte cut", false, cut(-1), "checksum mismatch"},
		{"magic", false, flip(0), "bad magic"},
		{"key byte", false, flip(headerSize), "checksum mismatch"},
		{"entry byte", false, flip(-20), "checksum mismatch"},
		{"checksum", false, flip(-1), "checksum mismatch"},
		{"other key", true, flip(headerSize + 3), "holds the table of"},
		{"segment count", true, func(b []byte) []byte { b[headerSize+len("b-0a1b")+3] = 0xff; return b }, "segments: more than the file holds"},
		{"table size", true, func(b []byte) []byte { return append(b[:len(b)-crcSize], 0, 0, 0, 0, 0) }, "sizes do not match"},
		{"rule index", true, func(b []byte) []byte {
			// The first entry's rule (entries follow the last segment,
			// the stats, the empty error, the table length, the table
			// header and its two pages).
			b[len(b)-crcSize-3*unwind.RuleSize-4*unwind.EntrySize+2] = 9
			return b
		}, "rule index 9 out of range"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, l := open(t, 0)
			tab := sampleTable(3)
			tab.Stats.FirstError = ""
			save(d, "b-0a1b", tab)
			rewrite(t, d, "b-0a1b", c.fixCRC, c.edit)
			if got, ok := d.Load("b-0a1b"); ok {
				t.Fatalf("corrupt file used: %+v", got)
			}
			if len(l.warns) != 1 || !strings.Contains(l.warns[0], d.File("b-0a1b")) || !strings.Contains(l.warns[0], c.want) {
				t.Errorf("warnings %q, want one naming the file and %q", l.warns, c.want)
			}
			save(d, "b-0a1b", tab)
			if got, ok := d.Load("b-0a1b"); !ok || !reflect.DeepEqual(got, tab) {
				t.Error("not loaded back once rewritten")
			}
		})
	}
}

// Past the size bound the least recently used files go, a load counting as
// a use; temporary files a killed probee left go once old; other files
// stay.
func TestEvict(t *testing.T) {
	one := int64(fileSize(t, sampleTable(50)))
	d, l := open(t, 2*one)
	old := time.Now().Add(-time.Minute)
	stale := filepath.Join(d.Path(), "b-09.unwind.tmp-123")
	fresh := filepath.Join(d.Path(), "b-08.unwind.tmp-456")
	other := filepath.Join(d.Path(), "README")
	for _, p := range []string{stale, fresh, other} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.Chtimes(stale, old.Add(-2*staleTemp), old.Add(-2*staleTemp))
	os.Chtimes(other, old.Add(-2*staleTemp), old.Add(-2*staleTemp))
	for i, key := range []string{"b-01", "b-02"} {
		save(d, key, sampleTable(50))
		at := old.Add(time.Duration(i) * time.Second) // b-01 is the older
		os.Chtimes(d.File(key), at, at)
	}
	if _, ok := d.Load("b-01"); !ok { // b-01 is now the more recently used
		t.Fatal("b-01 not loaded")
	}
	save(d, "b-03", sampleTable(50))
	if got, want := names(t, d), []string{"README", "b-01.unwind", "b-03.unwind", "b-08.unwind.tmp-456"}; !slices.Equal(got, want) {
		t.Errorf("files %q, want %q", got, want)
	}
	if len(l.warns) > 0 {
		t.Errorf("warnings %q", l.warns)
	}
}

// Writes under the bound scan the directory once, not once each; past the
// bound, or a minute after the last scan (another probee's files), a write
// scans it and evicts.
func TestEvictScans(t *testing.T) {
	one := int64(fileSize(t, sampleTable(50)))
	d, _ := open(t, 3*one)
	for _, key := range []string{"b-01", "b-02", "b-03"} {
		save(d, key, sampleTable(50))
	}
	if d.scans != 1 {
		t.Errorf("%d scans for 3 writes under the bound, want 1", d.scans)
	}
	save(d, "b-04", sampleTable(50))
	if d.scans != 2 || len(names(t, d)) != 3 {
		t.Errorf("past the bound: %d scans, files %q; want 2 scans, 3 files", d.scans, names(t, d))
	}
	other := filepath.Join(d.Path(), "b-09.unwind") // another probee's write
	if err := os.WriteFile(other, make([]byte, 2*one), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(other, old, old)
	d.scanned = d.scanned.Add(-rescanEvery - time.Second)
	save(d, "b-05", sampleTable(50))
	if _, err := os.Stat(other); err == nil || d.scans != 3 {
		t.Errorf("a minute on, %d scans and another probee's old file kept; want 3 scans and it evicted", d.scans)
	}
}

func fileSize(t *testing.T, tab *unwind.Table) int {
	head, table, sum, err := encode("b-01", tab)
	if err != nil {
		t.Fatal(err)
	}
	return len(head) + len(table) + len(sum)
}

func names(t *testing.T, d *Dir) []string {
	ents, err := os.ReadDir(d.Path())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// A directory that cannot be written is reported once, whatever the number
// of saves; loads are misses.
func TestWriteFails(t *testing.T) {
	d, l := open(t, 0)
	if err := os.RemoveAll(d.Path()); err != nil {
		t.Fatal(err)
	}
	save(d, "b-01", sampleTable(2))
	save(d, "b-02", sampleTable(2))
	if len(l.warns) != 1 || !strings.Contains(l.warns[0], "built again on the next run") {
		t.Errorf("warnings %q, want one", l.warns)
	}
	if _, ok := d.Load("b-01"); ok {
		t.Error("loaded from a directory that is gone")
	}
}
