package python

import (
	"debug/dwarf"
	"debug/elf"
	"strings"
	"testing"
)

// structs reads the struct types named in names (struct tags or typedef
// names) from d, by name.
func structs(t *testing.T, d *dwarf.Data, names map[string]bool) map[string]*dwarf.StructType {
	t.Helper()
	out := map[string]*dwarf.StructType{}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			return out
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		if (e.Tag != dwarf.TagStructType && e.Tag != dwarf.TagTypedef) || !names[name] || out[name] != nil {
			continue
		}
		typ, err := d.Type(e.Offset)
		if err != nil {
			t.Fatal(err)
		}
		if td, ok := typ.(*dwarf.TypedefType); ok {
			typ = td.Type
		}
		if st, ok := typ.(*dwarf.StructType); ok && !st.Incomplete {
			out[name] = st
		}
	}
}

// offsetOf is the offset of the member at path ("a.b") in st; false when
// st has none.
func offsetOf(st *dwarf.StructType, path string) (uint64, bool) {
	var off int64
	for _, name := range strings.Split(path, ".") {
		var found *dwarf.StructField
		for _, f := range st.Field {
			if f.Name == name {
				found = f
			}
		}
		if found == nil {
			return 0, false
		}
		off += found.ByteOffset
		typ := found.Type
		for {
			td, ok := typ.(*dwarf.TypedefType)
			if !ok {
				break
			}
			typ = td.Type
		}
		if st, _ = typ.(*dwarf.StructType); st == nil {
			st = &dwarf.StructType{} // a leaf: a path going on finds nothing
		}
	}
	return uint64(off), true
}

// dwarfLayout reads the layout of the interpreter at path from its DWARF:
// where each field of Layout is, by the first of its names that v has.
func dwarfLayout(t *testing.T, path string, v Version) Layout {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		t.Fatalf("%s has no DWARF: %v", path, err)
	}
	st := structs(t, d, map[string]bool{"pyruntimestate": true, "_is": true, "_ts": true, "_PyCFrame": true,
		"_frame": true, "_PyInterpreterFrame": true, "PyCodeObject": true, "PyASCIIObject": true, "PyCompactUnicodeObject": true, "PyBytesObject": true})
	l := Layout{Version: v, InterpreterFrames: st["_PyInterpreterFrame"] != nil, HasCFrame: v == Version{3, 11} || v == Version{3, 12}}
	frame := "_frame"
	if l.InterpreterFrames {
		frame = "_PyInterpreterFrame"
	}
	fields := []struct {
		dst   *uint64
		typ   string
		paths []string // the first v has
	}{
		{&l.RuntimeInterpreters, "pyruntimestate", []string{"interpreters.head"}},
		{&l.InterpThreads, "_is", []string{"tstate_head", "threads.head"}},
		{&l.ThreadNext, "_ts", []string{"next"}},
		{&l.ThreadID, "_ts", []string{"thread_id"}},
		{&l.ThreadFrame, "_ts", []string{"frame", "cframe", "current_frame"}},
		{&l.FramePrevious, frame, []string{"f_back", "previous"}},
		{&l.FrameCode, frame, []string{"f_code", "f_executable"}},
		{&l.FrameInstr, frame, []string{"f_lasti", "prev_instr", "instr_ptr"}},
		{&l.CodeFilename, "PyCodeObject", []string{"co_filename"}},
		{&l.CodeName, "PyCodeObject", []string{"co_name"}},
		{&l.CodeFirstLine, "PyCodeObject", []string{"co_firstlineno"}},
		{&l.CodeLineTable, "PyCodeObject", []string{"co_lnotab", "co_linetable"}},
		{&l.StrLength, "PyASCIIObject", []string{"length"}},
		{&l.StrState, "PyASCIIObject", []string{"state"}},
		{&l.BytesSize, "PyBytesObject", []string{"ob_base.ob_size"}},
		{&l.BytesData, "PyBytesObject", []string{"ob_sval"}},
	}
	if l.InterpreterFrames {
		fields = append(fields, []struct {
			dst   *uint64
			typ   string
			paths []string
		}{
			{&l.FrameOwner, frame, []string{"owner"}},
			{&l.CodeQualname, "PyCodeObject", []string{"co_qualname"}},
			{&l.CodeAdaptive, "PyCodeObject", []string{"co_code_adaptive"}},
		}...)
	}
	if v == (Version{3, 11}) {
		fields = append(fields, struct {
			dst   *uint64
			typ   string
			paths []string
		}{&l.FrameIsEntry, frame, []string{"is_entry"}})
	}
	if l.HasCFrame {
		fields = append(fields, struct {
			dst   *uint64
			typ   string
			paths []string
		}{&l.CFrameCurrent, "_PyCFrame", []string{"current_frame"}})
	}
	for _, fl := range fields {
		s := st[fl.typ]
		if s == nil {
			t.Fatalf("%s: no struct %s in its DWARF", path, fl.typ)
		}
		found := false
		for _, p := range fl.paths {
			if off, ok := offsetOf(s, p); ok {
				*fl.dst, found = off, true
				break
			}
		}
		if !found {
			t.Fatalf("%s: struct %s has none of %v", path, fl.typ, fl.paths)
		}
	}
	l.StrASCIIData = uint64(st["PyASCIIObject"].Size())
	l.StrCompactData = uint64(st["PyCompactUnicodeObject"].Size())
	return l
}
