// Package monotime reads CLOCK_MONOTONIC in nanoseconds: the clock the
// kernel's BPF helpers (bpf_ktime_get_ns) and probee's perf records
// (use_clockid) stamp events with, so a time read in user space can be
// compared with theirs. Go's time.Now carries a monotonic reading too, but
// not one comparable with the kernel's.
package monotime

import "golang.org/x/sys/unix"

// Now is CLOCK_MONOTONIC in nanoseconds; 0 if the clock cannot be read.
func Now() uint64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return 0
	}
	return uint64(ts.Nano())
}
