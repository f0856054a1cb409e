package hostile

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
)

// Renamed writes name: a copy of the ELF file genuine, build-id and all,
// whose symbol names (.strtab and .dynstr) have from replaced by to, of
// the same length (case 6: "leaf" -> "EVIL"; the copy named root's
// process's frames in the same run before file identities).
func Renamed(dir, name, genuine, from, to string) (string, error) {
	if len(from) != len(to) {
		return "", fmt.Errorf("rename %q to %q: not the same length", from, to)
	}
	return edited(dir, name, genuine, func(f *elf.File, b []byte) error {
		for _, sec := range []string{".strtab", ".dynstr"} {
			if s := f.Section(sec); s != nil {
				copy(b[s.Offset:], bytes.ReplaceAll(b[s.Offset:s.Offset+s.Size], []byte(from), []byte(to)))
			}
		}
		return nil
	})
}

// CorruptEhFrame writes name: a copy of the ELF file genuine, build-id
// and all, whose FDEs' instructions are DW_CFA_def_cfa_offset 64 and
// DW_CFA_nop (case 6: every pc gets CFA = rsp+64, wrong from a function's
// entry on; such a table in the on-disk cache, keyed by build-id,
// made later runs of the genuine program [truncated]).
func CorruptEhFrame(dir, name, genuine string) (string, error) {
	return edited(dir, name, genuine, func(f *elf.File, b []byte) error {
		s := f.Section(".eh_frame")
		if s == nil {
			return fmt.Errorf("%s has no .eh_frame", genuine)
		}
		nopFDEs(b[s.Offset : s.Offset+s.Size])
		return nil
	})
}

// nopFDEs sets the instructions of every FDE in an .eh_frame whose CIEs
// have augmentation "zR" (GCC's) to DW_CFA_def_cfa_offset 64, then
// DW_CFA_nop: they follow the entry's
// length, CIE pointer, pc_begin, pc_range (4 bytes each) and a one-byte
// augmentation length.
func nopFDEs(eh []byte) {
	for off := 0; off+8 <= len(eh); {
		n := int(le.Uint32(eh[off:]))
		if n == 0 || n == -1 || off+4+n > len(eh) {
			return
		}
		if le.Uint32(eh[off+4:]) != 0 && n >= 13 { // an FDE
			ins := eh[off+4+13 : off+4+n]
			clear(ins)
			if len(ins) >= 2 { // DW_CFA_def_cfa_offset 64: wrong from the entry on
				ins[0], ins[1] = 0x0e, 0x40
			}
		}
		off += 4 + n
	}
}

// edited writes name, a copy of genuine changed by edit.
func edited(dir, name, genuine string, edit func(*elf.File, []byte) error) (string, error) {
	b, err := os.ReadFile(genuine)
	if err != nil {
		return "", err
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return "", fmt.Errorf("%s: %w", genuine, err)
	}
	defer f.Close()
	if err := edit(f, b); err != nil {
		return "", err
	}
	return writeFile(dir, name, b)
}

// DebugLinkName is the .gnu_debuglink of DebugLinkEscape's image.
const DebugLinkName = "hostile.debug"

// SecretName is the symbol SecretDebug gives the stub.
const SecretName = "SECRET_stub"

// DebugLinkEscape writes debuglink.so (case 7) into dir: the stub, no
// symbols, a .gnu_debuglink naming DebugLinkName, and dir/.debug, a
// symbolic link to target, where the debug file would be looked for (a
// link to /etc with the link naming "shadow" had probee open
// /etc/shadow).
func DebugLinkEscape(dir, target string) (string, error) {
	link := append([]byte(DebugLinkName), make([]byte, 4-len(DebugLinkName)%4)...)
	link = le.AppendUint32(link, 0) // the CRC, which probee does not check
	secs := append(stubSections(""), Section{Name: ".gnu_debuglink", Type: elf.SHT_PROGBITS, Data: link, Align: 4})
	im := Image{Progs: []Prog{loadAll}, Sections: secs}
	p, err := write(dir, "debuglink.so", &im)
	if err != nil {
		return "", err
	}
	return p, os.Symlink(target, filepath.Join(dir, ".debug"))
}

// SecretDebug writes DebugLinkName into dir, a file only root may read
// in the suite: a debug file naming the stub SecretName. A frame named so
// is a frame named from a file the process's user cannot read.
func SecretDebug(dir string) (string, error) {
	im := Image{Progs: []Prog{loadAll}, Sections: stubSections(SecretName)}
	return write(dir, DebugLinkName, &im)
}

// ChrootTmp lays out a chroot for case 7 under root: root/tmp is an
// absolute symbolic link to target, and root/target a directory, where
// the process in the chroot writes /tmp/perf-PID.map. Read from outside
// without resolving inside the root, the link names the host's target.
func ChrootTmp(root, target string) error {
	if !filepath.IsAbs(target) {
		return fmt.Errorf("chroot /tmp target %q: not absolute", target)
	}
	if err := os.MkdirAll(filepath.Join(root, target), 0o755); err != nil {
		return err
	}
	return os.Symlink(target, filepath.Join(root, "tmp"))
}

func writeFile(dir, name string, b []byte) (string, error) {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o755); err != nil {
		return "", fmt.Errorf("write %s: %w", p, err)
	}
	return p, nil
}
