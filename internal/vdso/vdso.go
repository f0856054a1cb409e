// Package vdso gives the image of the kernel's vDSO, the small ELF object
// the kernel maps into every process as "[vdso]" (clock_gettime,
// gettimeofday, getcpu run there without a system call). The mapping has
// no file, so neither its unwind rules nor its symbols can be read from
// disk; but the image is the same in every 64-bit process of one running
// kernel, so probee reads its own copy (the [vdso] line of /proc/self/maps,
// read through /proc/self/mem) once. unwind builds the vDSO's table from
// it and resolver names its functions.
//
// A process whose [vdso] mapping has another size (a 32-bit process's
// image) is not this image: Matches says so.
package vdso

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/internal/safeelf"
)

// Path is the name /proc/PID/maps gives the vDSO mapping.
const Path = "[vdso]"

// image reads the image once.
var image = sync.OnceValues(func() ([]byte, error) { return read("/proc/self") })

// Image returns the vDSO image of the running kernel (read once).
func Image() ([]byte, error) { return image() }

// Matches reports whether m is a vDSO mapping holding this kernel's 64-bit
// image: its path is [vdso] and its size the image's.
func Matches(m procmaps.Mapping) bool {
	if m.Path != Path {
		return false
	}
	img, err := Image()
	return err == nil && m.End-m.Start == uint64(len(img))
}

// Open parses the image as an ELF file.
func Open() (*elf.File, error) {
	img, err := Image()
	if err != nil {
		return nil, err
	}
	return safeelf.NewFile(Path, bytes.NewReader(img))
}

// read copies the [vdso] mapping of the process whose /proc directory is
// dir.
func read(dir string) ([]byte, error) {
	maps, err := procmaps.Read(dir + "/maps")
	if err != nil {
		return nil, fmt.Errorf("vdso: %w", err)
	}
	for _, m := range maps {
		if m.Path == Path {
			return readMem(dir+"/mem", m.Start, m.End)
		}
	}
	return nil, errors.New("vdso: the kernel maps no vDSO into processes (vdso=0 on its command line?)")
}

func readMem(path string, start, end uint64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("vdso: %w", err)
	}
	defer f.Close()
	img := make([]byte, end-start)
	if _, err := f.ReadAt(img, int64(start)); err != nil {
		return nil, fmt.Errorf("vdso: read the image: %w", err)
	}
	return img, nil
}
