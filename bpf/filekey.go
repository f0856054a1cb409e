package bpf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/probee/probee/internal/safefile"
	"github.com/probee/probee/unwind"
)

// fileKey is the key under which the unwinder finds m's table in
// file_tables: the identity of the file m's mappings hold (vma.h reads
// vm_file->f_inode). /proc/PID/maps, the mapping records and stat show an
// overlayfs file (a container image's) by the overlay's inode on kernels
// 6.9+ (file_user_inode), while the mapping holds the layer's file; so the
// key is asked of the kernel, once per file: probee maps m.File and looks
// the address up as the unwinder does (probee_file_key, filekey.h). Where
// that fails (no path, the file gone), the identity the maps show is
// used. The vDSO, which has no file, has its own key (vdsoKey). Called
// with s.tmu held.
func (s *Session) fileKey(m unwind.Module) (probeeFileKey, bool) {
	if m.Path == unwind.VDSOPath {
		return vdsoKey, true
	}
	shown, ok := shownKey(m.Dev, m.Inode)
	if !ok {
		return probeeFileKey{}, false
	}
	if key, ok := s.keys[shown]; ok {
		return key, true
	}
	key, err := s.kernelFileKey(m.File)
	if err != nil {
		key = shown
	}
	s.keys[shown] = key
	return key, true
}

// shownKey is the key of the file with device dev ("fd:01") and inode
// ino as the maps show it (s.keys maps it to the unwinder's); false:
// no file's.
func shownKey(dev string, ino uint64) (probeeFileKey, bool) {
	d, err := kernelDev(dev)
	if err != nil || ino == 0 {
		return probeeFileKey{}, false
	}
	return probeeFileKey{Dev: d, Ino: ino}, true
}

// vdsoKey files the vDSO's table: vma.h gives a vDSO mapping this key
// (VDSO_KEY_DEV in probee.h; a kernel dev_t has 32 bits, so no file has it).
var vdsoKey = probeeFileKey{Dev: vdsoKeyDev()}

// vdsoKeyDev is VDSO_KEY_DEV, the enumerator -1, as the u64 it converts
// to in C: every bit set. clang 14's BTF keeps an enumerator's 32 bits
// without their sign, so they are sign-extended here.
func vdsoKeyDev() uint64 {
	v := probeeVdsoKeyVDSO_KEY_DEV
	return uint64(int64(int32(v)))
}

// kernelFileKey maps the file at path and returns the key the unwinder
// finds that mapping's table by.
func (s *Session) kernelFileKey(path string) (probeeFileKey, error) {
	if path == "" {
		return probeeFileKey{}, errors.New("no path opens the file")
	}
	f, err := safefile.OpenNoFollow(path) // a mapped file's path names no link
	if err != nil {
		return probeeFileKey{}, err
	}
	defer f.Close()
	b, err := unix.Mmap(int(f.OS().Fd()), 0, os.Getpagesize(), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return probeeFileKey{}, fmt.Errorf("map %s: %w", path, err)
	}
	defer unix.Munmap(b)
	ctx := binary.NativeEndian.AppendUint64(nil, uint64(uintptr(unsafe.Pointer(&b[0]))))
	prog, err := s.program("probee_file_key")
	if err != nil {
		return probeeFileKey{}, err
	}
	// bpf_find_vma only trylocks the address space: another of probee's
	// threads mapping memory at that moment makes it fail (-EBUSY).
	for try := 0; try < 20; try++ {
		ret, err := prog.Run(&ebpf.RunOptions{Context: ctx})
		if err != nil {
			return probeeFileKey{}, fmt.Errorf("run probee_file_key: %w", err)
		}
		if ret == 0 {
			var key probeeFileKey
			err := s.objs.FileKeyOut.Lookup(uint32(0), &key)
			return key, err
		}
		time.Sleep(100 * time.Microsecond)
	}
	return probeeFileKey{}, fmt.Errorf("the kernel found no mapping of %s", path)
}
