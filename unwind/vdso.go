package unwind

import (
	"errors"
	"fmt"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/internal/vdso"
)

// VDSOPath is the path /proc/PID/maps gives the vDSO mapping, the one
// executable mapping without a file that has unwind rules: the kernel's
// vDSO image carries .eh_frame, read from probee's own copy
// (internal/vdso), the same in every 64-bit process.
const VDSOPath = vdso.Path

// errNotVDSO: a [vdso] mapping of another size than this kernel's 64-bit
// image (a 32-bit process's).
var errNotVDSO = errors.New("a [vdso] mapping that is not this kernel's 64-bit vDSO image")

// vdsoTable builds the vDSO's table once per Cache.
func (c *Cache) vdsoTable() (*Table, error) {
	c.vdsoOnce.Do(func() {
		f, err := vdso.Open()
		if err != nil {
			c.vdsoErr = err
			return
		}
		c.vdsoErr = safeelf.Guard(vdso.Path, func() (e error) { c.vdso, e = BuildELF(f); return e })
		if c.vdsoErr != nil {
			c.vdsoErr = fmt.Errorf("unwind table of the vdso: %w", c.vdsoErr)
		}
	})
	return c.vdso, c.vdsoErr
}

// vdsoModule is the module of a process's [vdso] mapping m.
func (c *Cache) vdsoModule(m procmaps.Mapping) (Module, error) {
	if !vdso.Matches(m) {
		return Module{}, errNotVDSO
	}
	t, err := c.vdsoTable()
	if err != nil {
		return Module{}, err
	}
	bias, err := LoadBias(t.Loads, m)
	if err != nil {
		return Module{}, err
	}
	return Module{Start: m.Start, End: m.End, Bias: bias, Path: m.Path, Table: t, Offset: m.Offset}, nil
}

// VDSOModule is the vDSO's module as a file the kernel finds by identity
// (bpf file tables: the vDSO is keyed apart, as it has no file), mapped at
// address 0.
func (c *Cache) VDSOModule() (Module, error) {
	img, err := vdso.Image()
	if err != nil {
		return Module{}, err
	}
	return c.vdsoModule(procmaps.Mapping{Start: 0, End: uint64(len(img)), Perms: "r-xp", Path: VDSOPath})
}
