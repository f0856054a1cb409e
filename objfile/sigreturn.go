package objfile

import (
	"bytes"
	"debug/elf"
)

// A signal handler returns into the trampoline its libc registered as
// sa_restorer: glibc's __restore_rt (musl's is written the same), `mov
// $15,%rax; syscall` (rt_sigreturn). The walk crosses it into the
// interrupted code (its FDE marks a signal frame), but its name is a
// local symbol, gone from a stripped libc (Debian's keeps .dynsym only):
// the frame between a handler and the code it interrupted was
// "libc.so.6+0x3c04f". perf names it only with libc's debug file. A
// library that exports sigaction and holds that code once near it (glibc
// defines both in sigaction.c, musl in neighbouring files of src/signal)
// gets the label __restore_rt over it (labels.go), from the byte before:
// a return address is looked up at pc-1, and glibc puts a nop there,
// which the trampoline's FDE covers too.

// sigreturnCode is x86-64 `mov $15,%rax; syscall`.
var sigreturnCode = []byte{0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05}

// sigreturnWindow is how far from sigaction the trampoline is looked for,
// either way (glibc's is 0x40 bytes before it).
const sigreturnWindow = 16 << 10

// sigactionRank ranks the exported names of sigaction's implementation
// (0: not one): glibc's __libc_sigaction first, then __sigaction, then
// sigaction (glibc's alias of __sigaction, musl's function).
func sigactionRank(name string) int {
	switch name {
	case "__libc_sigaction":
		return 3
	case "__sigaction":
		return 2
	case "sigaction":
		return 1
	}
	return 0
}

// sigreturnLabel returns the __restore_rt label of f, read as o; ok is
// false when o exports no sigaction or the code is not found exactly
// once within sigreturnWindow of it.
func sigreturnLabel(f *elf.File, o *Object) (Symbol, bool) {
	if f.Machine != elf.EM_X86_64 {
		return Symbol{}, false
	}
	at, ok := o.sigactionAt()
	if !ok {
		return Symbol{}, false
	}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_EXECINSTR == 0 || at < s.Addr || at-s.Addr >= s.Size {
			continue
		}
		lo := max(s.Addr, at-min(at, sigreturnWindow))
		hi := at + min(s.Size-(at-s.Addr), sigreturnWindow)
		if hi <= lo { // wrapped past 2^64: a malformed section
			return Symbol{}, false
		}
		code := make([]byte, hi-lo)
		if _, err := s.ReadAt(code, int64(lo-s.Addr)); err != nil {
			return Symbol{}, false
		}
		i := bytes.Index(code, sigreturnCode)
		if i < 1 || bytes.Contains(code[i+1:], sigreturnCode) {
			return Symbol{}, false
		}
		return Symbol{Name: "__restore_rt", Addr: lo + uint64(i) - 1, Size: uint64(len(sigreturnCode)) + 1}, true
	}
	return Symbol{}, false
}

// sigactionAt returns the address of o's sigaction, by the best ranked
// name it defines, in one pass over its functions.
func (o *Object) sigactionAt() (at uint64, ok bool) {
	best := 0
	for _, s := range o.Funcs {
		if r := sigactionRank(s.Name); r > best && s.Addr != 0 {
			at, best = s.Addr, r
		}
	}
	return at, best > 0
}
