package safeelf

import "debug/elf"

// Symbol table records are read from section bytes, not with debug/elf's
// Symbols and DynamicSymbols, which make a string per symbol (resolver
// lists libLLVM's 258,000; unwind looks for the functions no FDE covers).

// Sym is the part of an Elf32_Sym/Elf64_Sym record probee uses.
type Sym struct {
	Name        uint32 // offset in the table's string table
	Info        byte
	Shndx       uint16
	Value, Size uint64
}

// SymSize returns the record size of f's class, 0 when unknown.
func SymSize(f *elf.File) int {
	switch f.Class {
	case elf.ELFCLASS64:
		return elf.Sym64Size
	case elf.ELFCLASS32:
		return elf.Sym32Size
	}
	return 0
}

// DecodeSym decodes one record of len SymSize(f).
func DecodeSym(f *elf.File, b []byte) Sym {
	bo := f.ByteOrder
	if f.Class == elf.ELFCLASS32 {
		return Sym{Name: bo.Uint32(b[0:4]), Value: uint64(bo.Uint32(b[4:8])), Size: uint64(bo.Uint32(b[8:12])),
			Info: b[12], Shndx: bo.Uint16(b[14:16])}
	}
	return Sym{Name: bo.Uint32(b[0:4]), Info: b[4], Shndx: bo.Uint16(b[6:8]),
		Value: bo.Uint64(b[8:16]), Size: bo.Uint64(b[16:24])}
}

// IsFunc reports whether s is a function (STT_FUNC, STT_GNU_IFUNC).
func (s Sym) IsFunc() bool {
	t := elf.ST_TYPE(s.Info)
	return t == elf.STT_FUNC || t == elf.STT_GNU_IFUNC
}

// IsGo reports whether the Go toolchain linked f.
func IsGo(f *elf.File) bool {
	return f.Section(".go.buildinfo") != nil || f.Section(".note.go.buildid") != nil
}
