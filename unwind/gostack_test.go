package unwind

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/internal/testgate"
)

// The code of runtime.morestack and runtime.systemstack in a PIE built
// by Go 1.26 (objdump's bytes), where the TLS offset is an immediate in a
// register rather than a displacement.
const (
	pieMorestack = "48c7c1f8ffffff 64488b39 488b5f30 488b0424 48894740 488d442408 48894738" +
		" 48896f60 48895750 488b33 4839f7 750a e84b3e0000 e8c6190000 488b7348 4839f7 750a" +
		" e8583e0000 e8b3190000 488b442408 48894310 488d442410 48894308 48897b18 488b1b" +
		" 64488919 488b6338 48c7c500000000 e8663f0000 e881190000 c3"
	pieSystemstack = "55 4889e5 488b7c2410 48c7c1f8ffffff 64488b01 488b5830 483b4348 745d 488b13" +
		" 4839d0 7455 483b83b8000000 7555 e88cf2ffff 64488911 4989d6 488b6238 4889fa" +
		" 488b3f ffd7 48c7c1f8ffffff 64488b01 488b5830 488b83b8000000 64488901 488b6038" +
		" 488b6860 c3"
)

func code(t testing.TB, s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeMorestack(t *testing.T) {
	const addr = 0xa97c0
	for _, c := range []struct {
		name string
		code string
		want GoStack
		ok   bool
	}{
		{"pie", pieMorestack, GoStack{Return: addr + 0x7a, TLS: -8, GM: 0x30, SchedPC: 0x40, SchedSP: 0x38, SchedBP: 0x60}, true},
		// No store of rbp in g.sched: not the form GoStack describes.
		{"no sched.bp", strings.Replace(pieMorestack, " 48896f60", "", 1), GoStack{}, false},
		// rbp written before it is stored: the store is no longer the caller's rbp.
		{"rbp changed", strings.Replace(pieMorestack, "48c7c1f8ffffff", "48c7c1f8ffffff 4889c5", 1), GoStack{}, false},
		{"no call after the switch", strings.TrimSuffix(pieMorestack, " e8663f0000 e881190000 c3"), GoStack{}, false},
		// mov $0,%edi after g was loaded into rdi: rdi no longer holds g.
		{"g's register written in 32 bits", strings.Replace(pieMorestack, "64488b39", "64488b39 bf00000000", 1), GoStack{}, false},
		{"undecodable", "0f0b0f", GoStack{}, false},
	} {
		gs, ok := decodeMorestack(code(t, c.code), addr)
		if ok != c.ok || (ok && gs != c.want) {
			t.Errorf("%s: decodeMorestack = %+v, %v; want %+v, %v", c.name, gs, ok, c.want, c.ok)
		}
	}
}

func TestDecodeSystemstack(t *testing.T) {
	for _, c := range []struct {
		name string
		code string
		want uint32
		ok   bool
	}{
		{"pie", pieSystemstack, 0xb8, true},
		// Without the indirect call, the compare with m.curg before it
		// and the load of m.g0 are not taken for it.
		{"no call", strings.Replace(pieSystemstack, " ffd7", "", 1), 0, false},
		// After the call, m is not reloaded from g: a load from rbx is
		// no field of m.
		{"m not reloaded", strings.Replace(pieSystemstack, "64488b01 488b5830 488b83b8000000", "64488b01 488b83b8000000", 1), 0, false},
	} {
		got, ok := decodeSystemstack(code(t, c.code))
		if ok != c.ok || got != c.want {
			t.Errorf("%s: decodeSystemstack = %#x, %v; want %#x, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// The offsets read from the runtime's code are those the fixture's DWARF
// gives the fields (the toolchain that builds the fixtures is the oracle),
// and Return follows the call of runtime.newstack.
func TestReadGoStackMatchesDWARF(t *testing.T) {
	path := testgate.Fixture(t, "../tests/fixtures/bin/gofx")
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gs, err := ReadGoStack(f)
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	off := fieldOffsets(t, d, "runtime.g", "runtime.m", "runtime.gobuf")
	sched := off["runtime.g.sched"]
	want := GoStack{Return: gs.Return, TLS: -8, GM: off["runtime.g.m"], MCurg: off["runtime.m.curg"],
		SchedPC: sched + off["runtime.gobuf.pc"], SchedSP: sched + off["runtime.gobuf.sp"], SchedBP: sched + off["runtime.gobuf.bp"]}
	if gs != want {
		t.Errorf("ReadGoStack = %+v, DWARF says %+v", gs, want)
	}
	fns, err := goFuncs(f, "runtime.newstack")
	if err != nil {
		t.Fatal(err)
	}
	newstack := fns[0].addr
	call := make([]byte, 5)
	if err := safeelf.ReadAt(f, call, gs.Return-5); err != nil || call[0] != 0xe8 ||
		gs.Return+uint64(int32(f.ByteOrder.Uint32(call[1:]))) != newstack {
		t.Errorf("the 5 bytes before Return %#x are % x, not a call of runtime.newstack at %#x", gs.Return, call, newstack)
	}
}

// fieldOffsets returns the offsets of the members of the named structs,
// by "struct.member".
func fieldOffsets(t *testing.T, d *dwarf.Data, names ...string) map[string]uint32 {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]uint32{}
	r := d.Reader()
	for e, err := r.Next(); e != nil && err == nil; e, err = r.Next() {
		name, _ := e.Val(dwarf.AttrName).(string)
		if e.Tag != dwarf.TagStructType || !want[name] {
			continue
		}
		typ, err := d.Type(e.Offset)
		if err != nil {
			t.Fatal(err)
		}
		for _, fld := range typ.(*dwarf.StructType).Field {
			out[name+"."+fld.Name] = uint32(fld.ByteOffset)
		}
		delete(want, name)
		r.SkipChildren()
	}
	if len(want) > 0 {
		t.Fatalf("no DWARF struct for %v", want)
	}
	return out
}

// A Go binary gets its GoStack and segments; another file is no Go binary.
func TestReadGoBinary(t *testing.T) {
	for _, c := range []struct {
		name string
		isGo bool
	}{{"chain-fp", false}, {"chain-nopie-nofp", false}, {"gofx", true}} {
		b, ok, err := ReadGoBinary(testgate.Fixture(t, "../tests/fixtures/bin/"+c.name))
		if err != nil || ok != c.isGo || (ok && (b.Stack == nil || len(b.Loads) == 0)) {
			t.Errorf("%s: ReadGoBinary = %+v, %v, %v; want a Go binary: %v, with its GoStack", c.name, b, ok, err, c.isGo)
		}
	}
}

func FuzzDecodeGoRuntime(f *testing.F) {
	f.Add(code(f, pieMorestack))
	f.Add(code(f, pieSystemstack))
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeMorestack(b, 0x1000)
		decodeSystemstack(b)
	})
}

// A stripped Go binary gets its GoStack from .gopclntab, the same as its
// unstripped original gets from .symtab: gofx-cgo-stripped is strip's copy
// of gofx-cgo, which the system linker linked (C start-up code before
// runtime.text, which counting from .text's start missed by 0x100 bytes).
func TestReadGoStackStripped(t *testing.T) {
	for _, c := range [][2]string{{"gofx-cgo", "gofx-cgo-stripped"}} {
		var gs [2]GoStack
		for i, name := range c {
			f, err := elf.Open(testgate.Fixture(t, "../tests/fixtures/bin/"+name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if gs[i], err = ReadGoStack(f); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if gs[0] != gs[1] {
			t.Errorf("%s: %+v, %s: %+v, want the same", c[0], gs[0], c[1], gs[1])
		}
	}
}
