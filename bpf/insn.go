package bpf

import (
	"fmt"

	"github.com/probee/probee/internal/safefile"
)

// x86 uprobes refuse some first instructions (arch/x86/kernel/uprobes.c):
// lock and segment-override prefixes, and VEX-encoded (AVX) instructions.
// EVEX-encoded (AVX-512) ones are accepted on the 6.18 kernels checked but
// single-stepped wrongly: every process running the probed function
// computes garbage (libc's __strchrnul_evex breaks printf machine-wide), so
// they are refused here too. One refused address fails a whole uprobe_multi link, and
// finding it by bisection costs a registration per step, so targets are
// checked here first from their instruction bytes; bisection remains for
// anything this check does not know.

// refusedInsn reports why the kernel would refuse a uprobe on the
// instruction starting with b, or "" when it is fine.
func refusedInsn(b []byte) string {
	for _, c := range b {
		switch c {
		case 0xf0:
			return "lock prefix"
		case 0x26, 0x2e, 0x36, 0x3e:
			return "segment prefix"
		case 0x66, 0x67, 0xf2, 0xf3, 0x64, 0x65:
			continue // other legacy prefixes: look at the next byte
		case 0xc4, 0xc5:
			return "VEX-encoded (AVX) instruction"
		case 0x62:
			return "EVEX-encoded (AVX-512) instruction (single-stepped wrongly, it corrupts every process running it)"
		}
		return ""
	}
	return ""
}

// prefilter splits targets into those to attach and those the kernel is
// known to refuse (with the reason as the error).
func prefilter(targets []UprobeTarget) (ok []UprobeTarget, refused []Skipped) {
	files := map[string]*safefile.File{}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, t := range targets {
		f, seen := files[t.Path]
		if !seen {
			if f, _ = safefile.Open(t.Path); f != nil {
				files[t.Path] = f
			}
		}
		var b [15]byte
		if f != nil {
			if n, _ := f.ReadAt(b[:], int64(t.Offset)); n > 0 {
				if why := refusedInsn(b[:n]); why != "" {
					err := fmt.Errorf("uprobes cannot be placed on a %s (bytes % x)", why, b[:min(n, 5)])
					refused = append(refused, Skipped{t, err})
					continue
				}
			}
		}
		ok = append(ok, t)
	}
	return ok, refused
}
