package hostile

import (
	"bytes"
	"compress/zlib"
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/probee/probee/internal/elfnote"
	"github.com/probee/probee/internal/testgate"
)

func open(t *testing.T, path string, err error) *elf.File {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%s does not parse: %v", path, err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func fileSize(t *testing.T, path string) (size, allocated int64) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Size, st.Blocks * 512
}

// The stub is at StubOff in every image, named where the image names it.
func checkStub(t *testing.T, f *elf.File, path, name string) {
	t.Helper()
	b := make([]byte, len(Stub))
	if _, err := f.Progs[0].ReadAt(b, StubOff); err != nil || !bytes.Equal(b, Stub) {
		t.Errorf("%s: stub %x, %v", path, b, err)
	}
	syms, _ := f.Symbols()
	if name == "" && len(syms) != 0 {
		t.Errorf("%s: symbols %v, want none", path, syms)
	}
	if name != "" && (len(syms) != 1 || syms[0].Name != name || syms[0].Value != StubOff || elf.ST_TYPE(syms[0].Info) != elf.STT_FUNC) {
		t.Errorf("%s: symbols %+v, want %s at %#x", path, syms, name, StubOff)
	}
}

// Case 1: 16 KiB, no section headers, a PT_LOAD of 1 TiB, and
// .eh_frame_hdr's pointer inside it.
func TestHugeFilesz(t *testing.T) {
	p, err := HugeFilesz(t.TempDir())
	f := open(t, p, err)
	if size, _ := fileSize(t, p); size != 16<<10 || len(f.Sections) != 0 || len(f.Progs) != 2 {
		t.Fatalf("%d bytes, %d sections, %d program headers", size, len(f.Sections), len(f.Progs))
	}
	load, hdr := f.Progs[0], f.Progs[1]
	if load.Type != elf.PT_LOAD || load.Filesz != 1<<40 || load.Flags&elf.PF_X == 0 || hdr.Type != elf.PT_GNU_EH_FRAME {
		t.Fatalf("program headers %+v %+v", load.ProgHeader, hdr.ProgHeader)
	}
	b := make([]byte, hdr.Filesz)
	hdr.ReadAt(b, 0)
	ptr := hdr.Vaddr + 4 + uint64(int32(le.Uint32(b[4:])))
	if b[0] != 1 || b[1] != 0x1b || ptr != ehFrameOff || ptr >= 16<<10 {
		t.Errorf(".eh_frame_hdr %x points to %#x, want version 1, pcrel|sdata4, %#x", b, ptr, ehFrameOff)
	}
	checkStub(t, f, p, "")
}

// Case 1 via LD_PRELOAD: the same file with a PT_DYNAMIC, which ld.so
// maps, all 1 TiB of it, into a dynamic program that then runs.
func TestHugeFileszPreload(t *testing.T) {
	p, err := HugeFileszPreload(t.TempDir())
	f := open(t, p, err)
	if size, _ := fileSize(t, p); size != 16<<10 || len(f.Sections) != 0 || len(f.Progs) != 3 ||
		f.Progs[0].Filesz != 1<<40 || f.Progs[2].Type != elf.PT_DYNAMIC {
		t.Fatalf("%d bytes, %d sections, program headers %+v", size, len(f.Sections), f.Progs)
	}
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skip("no cat to preload it into")
	}
	cmd := exec.Command(cat, "/proc/self/maps")
	cmd.Env = []string{"LD_PRELOAD=" + p}
	out, err := cmd.CombinedOutput()
	var lo, hi uint64
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasSuffix(line, " "+p) {
			fmt.Sscanf(line, "%x-%x", &lo, &hi)
		}
	}
	if err != nil || hi-lo < 1<<40 {
		t.Errorf("LD_PRELOAD=%s cat /proc/self/maps: %v, mapped %#x bytes, want 1 TiB:\n%s", p, err, hi-lo, out)
	}
}

func TestPlain(t *testing.T) {
	p, err := Plain(t.TempDir(), "plain.so")
	checkStub(t, open(t, p, err), p, StubName)
}

// The images' DWARF places the stub at StubFile line 1.
func TestDWARFLines(t *testing.T) {
	im := Image{Progs: []Prog{loadAll}, Sections: append(stubSections(StubName), dwarfSections(debugLine())...)}
	p := filepath.Join(t.TempDir(), "lines.so")
	d, err := open(t, p, im.Write(p)).DWARF()
	if err != nil {
		t.Fatal(err)
	}
	cu, err := d.Reader().Next()
	if err != nil || cu == nil {
		t.Fatalf("compile unit: %v %v", cu, err)
	}
	lr, err := d.LineReader(cu)
	if err != nil || lr == nil {
		t.Fatalf("line reader: %v", err)
	}
	var e dwarf.LineEntry
	if err := lr.SeekPC(StubOff+2, &e); err != nil || e.File.Name != StubFile || e.Line != 1 {
		t.Errorf("line of the stub: %+v, %v", e, err)
	}
}

// Case 4: .debug_line and .debug_str say they inflate to 3 GiB; the
// stream Deflate makes inflates to exactly what it was asked for.
func TestDWARFBomb(t *testing.T) {
	dir := t.TempDir()
	z, err := Deflate(dir, 10<<20)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := io.Copy(io.Discard, must(zlib.NewReader(bytes.NewReader(z)))); n != 10<<20 || err != nil {
		t.Errorf("Deflate(10 MiB) inflates to %d bytes, %v", n, err)
	}
	if again, _ := Deflate(dir, 10<<20); !bytes.Equal(again, z) {
		t.Error("the cached stream differs")
	}
	p, err := DWARFBomb(dir, z)
	f := open(t, p, err)
	for _, name := range []string{".debug_line", ".debug_str"} {
		s := f.Section(name)
		if s == nil || s.Flags&elf.SHF_COMPRESSED == 0 || s.Size != BombSize || s.FileSize > uint64(len(z))+64 {
			t.Errorf("%s: %+v, want compressed, %d bytes inflated", name, s, uint64(BombSize))
		}
	}
	checkStub(t, f, p, StubName)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Case 4: a 4 GiB .debug_line that is a hole.
func TestSparseDebugLine(t *testing.T) {
	p, err := SparseDebugLine(t.TempDir())
	f := open(t, p, err)
	s := f.Section(".debug_line")
	size, alloc := fileSize(t, p)
	if s == nil || s.Size != SparseSize || size < int64(s.Offset+s.Size) || alloc > 1<<20 {
		t.Errorf(".debug_line %+v in a file of %d bytes, %d allocated", s, size, alloc)
	}
	checkStub(t, f, p, StubName)
}

// Case 5: one CIE and one FDE over the stub of 32M rows.
func TestManyRows(t *testing.T) {
	p, err := ManyRows(t.TempDir())
	f := open(t, p, err)
	s := f.Section(".eh_frame")
	eh, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	c := cie()
	if !bytes.Equal(eh[:len(c)], c) || s.Addr != s.Offset {
		t.Fatalf("CIE %x, section at %#x, address %#x", eh[:len(c)], s.Offset, s.Addr)
	}
	fd := eh[len(c):]
	n := int(le.Uint32(fd))
	begin := s.Addr + uint64(len(c)) + 8 + uint64(int32(le.Uint32(fd[8:])))
	if 4+n != len(fd) || le.Uint32(fd[4:]) != uint32(len(c)+4) || begin != StubOff {
		t.Fatalf("FDE of %d bytes in %d, over %#x", n, len(fd), begin)
	}
	insns := fd[4+13 : 4+13+3*ManyRowsCount]
	for i := 0; i < len(insns); i += 3 {
		if insns[i] != 0x41 || insns[i+1] != 0x0e || insns[i+2] != byte(16+8*(i/3&1)) {
			t.Fatalf("row %d: %x, want advance_loc(1) def_cfa_offset", i/3, insns[i:i+3])
		}
	}
	checkStub(t, f, p, StubName)
}

// Case 5: 65,535 section headers, nearly all .debug_junk.
func TestJunkSections(t *testing.T) {
	p, err := JunkSections(t.TempDir())
	f := open(t, p, err)
	types := 0
	for _, s := range f.Sections {
		if s.Name == ".debug_junk" {
			types++
		}
	}
	if len(f.Sections) != JunkCount || types != JunkCount-8 {
		t.Errorf("%d sections, %d .debug_junk", len(f.Sections), types)
	}
	checkStub(t, f, p, StubName)
}

func genuine(t *testing.T) string {
	p, _ := filepath.Abs("../fixtures/bin/spin-nofp")
	return testgate.Fixture(t, p)
}

// Case 6: the copies keep the build-id; one renames symbols, the other
// makes every FDE's instructions DW_CFA_def_cfa_offset 64 and nops.
func TestCopies(t *testing.T) {
	orig := genuine(t)
	dir := t.TempDir()
	g := open(t, orig, nil)
	evil, err := Renamed(dir, "evil", orig, "leaf", "EVIL")
	e := open(t, evil, err)
	corrupt, err := CorruptEhFrame(dir, "corrupt", orig)
	c := open(t, corrupt, err)
	for _, f := range []*elf.File{e, c} {
		if elfnote.BuildID(f) != elfnote.BuildID(g) || elfnote.BuildID(g) == "" {
			t.Errorf("build-id %q, want %q", elfnote.BuildID(f), elfnote.BuildID(g))
		}
	}
	names := map[string]bool{}
	syms, _ := e.Symbols()
	for _, s := range syms {
		names[s.Name] = true
	}
	if !names["spin_EVIL"] || names["spin_leaf"] {
		t.Errorf("renamed copy's symbols: spin_EVIL %v, spin_leaf %v", names["spin_EVIL"], names["spin_leaf"])
	}
	checkNopFDEs(t, must(g.Section(".eh_frame").Data()), must(c.Section(".eh_frame").Data()))
}

// checkNopFDEs: corrupt is orig with the FDEs' instructions replaced by
// DW_CFA_def_cfa_offset 64 and nops, and there were some.
func checkNopFDEs(t *testing.T, orig, corrupt []byte) {
	t.Helper()
	fdes := 0
	for off := 0; off+8 <= len(orig); {
		n := int(le.Uint32(orig[off:]))
		if n == 0 {
			break
		}
		body, cbody := orig[off+4:off+4+n], corrupt[off+4:off+4+n]
		if le.Uint32(body) != 0 {
			fdes++
			want := append(append(bytes.Clone(body[:13]), 0x0e, 0x40), make([]byte, n-15)...)
			if !bytes.Equal(cbody, want) {
				t.Errorf("FDE at %d: %x, want %x", off, cbody, want)
			}
		} else if !bytes.Equal(body, cbody) {
			t.Errorf("CIE at %d changed", off)
		}
		off += 4 + n
	}
	if fdes < 3 {
		t.Errorf("%d FDEs", fdes)
	}
}

// Case 7: .gnu_debuglink names DebugLinkName, .debug beside is a link to
// the target, and the secret debug file names the stub.
func TestDebugLinkEscape(t *testing.T) {
	dir, secret := t.TempDir(), t.TempDir()
	p, err := DebugLinkEscape(dir, secret)
	f := open(t, p, err)
	checkStub(t, f, p, "")
	link := must(f.Section(".gnu_debuglink").Data())
	if name, _, _ := bytes.Cut(link, []byte{0}); string(name) != DebugLinkName || len(link)%4 != 0 {
		t.Errorf(".gnu_debuglink %q", link)
	}
	if target, err := os.Readlink(filepath.Join(dir, ".debug")); target != secret || err != nil {
		t.Errorf(".debug -> %q, %v", target, err)
	}
	s, err := SecretDebug(secret)
	checkStub(t, open(t, s, err), s, SecretName)
}

func TestChrootTmp(t *testing.T) {
	root := t.TempDir()
	if err := ChrootTmp(root, "/var/jail-tmp"); err != nil {
		t.Fatal(err)
	}
	if target, _ := os.Readlink(filepath.Join(root, "tmp")); target != "/var/jail-tmp" {
		t.Errorf("tmp -> %q", target)
	}
	if st, err := os.Stat(filepath.Join(root, "var/jail-tmp")); err != nil || !st.IsDir() {
		t.Errorf("no directory at the target inside the root: %v", err)
	}
	if ChrootTmp(root, "rel") == nil {
		t.Error("a relative target was taken")
	}
}
