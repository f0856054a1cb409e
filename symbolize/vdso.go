package symbolize

import (
	"bytes"
	"strings"
	"sync"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/internal/vdso"
	"github.com/probee/probee/objfile"
)

// vdsoObject is the symbols of the kernel's vDSO image (internal/vdso: the
// same in every 64-bit process), read once; nil when it cannot be read.
// Frames in a [vdso] mapping are named from it (__vdso_clock_gettime), as
// perf names them.
var vdsoObject = sync.OnceValue(func() *objfile.Object {
	img, err := vdso.Image()
	if err != nil {
		return nil
	}
	o, err := objfile.NewObject(vdso.Path, bytes.NewReader(img))
	if err != nil {
		return nil
	}
	return o
})

// vdsoFrame names f, a frame in the mapping m, when m is the vDSO; it
// reports whether it did.
func vdsoFrame(f *Frame, m procmaps.Mapping) bool {
	if !vdso.Matches(m) {
		return false
	}
	o := vdsoObject()
	if o == nil {
		return false
	}
	f.BuildID = o.BuildID
	if va, ok := o.VirtAddr(f.ModuleOffset); ok {
		f.VirtAddr = va
		nameFrame(f, o, va)
		vdsoName(o, f, va-f.Offset)
	}
	return true
}

// vdsoName prefers a vDSO function's "__vdso_" name to its plain alias
// (clock_gettime): a stack then does not show libc's clock_gettime
// calling "clock_gettime".
func vdsoName(o *objfile.Object, f *Frame, addr uint64) {
	if f.Function == "" || strings.HasPrefix(f.Function, "__vdso_") {
		return
	}
	for _, s := range o.Funcs {
		if s.Addr == addr && s.Name == "__vdso_"+f.Function {
			f.Symbol, f.Function = s.Name, s.Name
			return
		}
	}
}
