package output

import (
	"fmt"
	"math/rand/v2"
)

// syntheticProfile builds n distinct stacks up to depth frames deep over a
// small vocabulary, with skewed counts, deterministically. Frames are
// interned, as probee's profiles have them.
func syntheticProfile(n, depth int) *Profile {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	probes := []string{"uprobe:libc:malloc", "uprobe:libc:free", "tracepoint:sched:sched_switch"}
	p := &Profile{Measure: Measure{Kind: KindHits}, Probes: probes}
	var fs Interner
	for i := range n {
		d := 1 + rng.IntN(depth)
		user := make([]*Frame, d)
		for j := range user {
			k := rng.IntN(4 + j*3)
			user[j] = fs.Intern(Frame{Name: fmt.Sprintf("func_%d_%d", j, k), Module: "/usr/bin/app",
				Address: 0x400000 + uint64(j<<12+k<<4), File: "app.c", Line: 100*j + k})
		}
		s := Sample{Probe: probes[i%len(probes)], PID: 1000 + i%5, Comm: fmt.Sprintf("worker-%d", i%5),
			User: fs.Stack(user), Count: uint64(1 + rng.IntN(1000)*rng.IntN(3))}
		if i%4 == 0 {
			s.Kernel = fs.Stack([]*Frame{fs.Intern(Frame{Name: "entry_SYSCALL_64"}),
				fs.Intern(Frame{Name: fmt.Sprintf("ksys_%d", rng.IntN(6))})})
		}
		p.Samples = append(p.Samples, s)
	}
	return p
}
