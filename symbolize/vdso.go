package symbolize

import (
	"bytes"
	"strings"
	"sync"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/internal/vdso"
	"github.com/probee/probee/objfile"
	"github.com/probee/probee/output"
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
func vdsoFrame(f *output.Frame, m procmaps.Mapping) bool {
	if !vdso.Matches(m) {
		return false
	}
	o := vdsoObject()
	if o == nil {
		return false
	}
	f.BuildID = o.BuildID
	if va, ok := o.VirtAddr(f.Offset); ok {
		f.Address = va
		if start := nameFrame(f, o, va); start != 0 {
			vdsoName(o, f, start)
		}
	}
	return true
}

// vdsoName prefers a vDSO function's "__vdso_" name to its plain alias
// (clock_gettime): a stack then does not show libc's clock_gettime
// calling "clock_gettime".
func vdsoName(o *objfile.Object, f *output.Frame, addr uint64) {
	if f.Name == "" || strings.HasPrefix(f.Name, "__vdso_") {
		return
	}
	for _, s := range o.Funcs {
		if s.Addr == addr && s.Name == "__vdso_"+f.Name {
			f.Name = s.Name
			return
		}
	}
}
