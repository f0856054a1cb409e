package trace

import (
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
)

// Hidden debugging aids for probee's own overhead. cpuProfileEnv names a file to which probee writes a Go CPU profile of
// its own run (a hidden debugging aid, used to find probee's overhead).
const cpuProfileEnv = "PROBEE_CPUPROFILE"

// stopCPUProfile ends the profile started in init; a no-op without one,
// and after the first call (finish and main both call it).
var stopCPUProfile = func() {}

// StopCPUProfile ends the CPU profile of probee's own run
// (PROBEE_CPUPROFILE), if any, as finish does: main calls it on every
// way out.
func StopCPUProfile() { stopCPUProfile() }

func init() {
	if os.Getenv(heapProfileEnv) != "" {
		runtime.MemProfileRate = 16 << 10 // finer than the default 512 KiB
	}
	path := os.Getenv(cpuProfileEnv)
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return
	}
	var once sync.Once
	stopCPUProfile = func() {
		once.Do(func() {
			pprof.StopCPUProfile()
			f.Close()
		})
	}
}

// heapProfileEnv names a file to which probee writes a Go heap profile
// when tracing stops, before the outputs are made (what the run held),
// and another, its name ending in stage, at later stages of the finish.
const heapProfileEnv = "PROBEE_HEAPPROFILE"

func writeHeapProfile(stage string) {
	path := os.Getenv(heapProfileEnv)
	if path == "" {
		return
	}
	path += stage
	runtime.GC() // the profile's in-use figures are as of the last collection
	if f, err := os.Create(path); err == nil {
		pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}
}
