package trace

import (
	"github.com/probee/probee/bpf"
	"github.com/probee/probee/probespec"
)

// MountKernelFS mounts the pseudo file systems the specs read when they are
// missing (bpf.KernelFS.Ensure), and says so once (Reporter.Notef): tracefs for
// tracepoints, which cannot work without it (an error naming the mount
// command), and tracefs and debugfs for kprobes, best effort (kallsyms
// serves when available_filter_functions is missing, and an unreadable
// blacklist is empty: a warning).
func MountKernelFS(specs []probespec.Spec, st Reporter) error {
	var tp, kp bool
	for _, s := range specs {
		tp = tp || s.Kind == probespec.Tracepoint
		kp = kp || s.Kind == probespec.Kprobe
	}
	if tp {
		if err := ensureFS(bpf.Tracefs, st); err != nil {
			return err
		}
	}
	if kp {
		for _, fs := range []bpf.KernelFS{bpf.Tracefs, bpf.Debugfs} {
			if err := ensureFS(fs, st); err != nil {
				st.Warnf("kernel functions are listed from /proc/kallsyms, without the kprobe blacklist: %v", err)
			}
		}
	}
	return nil
}

func ensureFS(fs bpf.KernelFS, st Reporter) error {
	mounted, err := fs.Ensure()
	if mounted {
		st.Notef("%s was not mounted: mounted it at %s (it stays mounted, as after perf)", fs.Name, fs.Dir)
	}
	return err
}
