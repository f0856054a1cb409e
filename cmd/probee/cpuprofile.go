package main

import (
	"os"
	"runtime/pprof"
)

// cpuProfileEnv names a file to which probee writes a Go CPU profile of
// its own run (a hidden debugging aid, used to find probee's overhead).
const cpuProfileEnv = "PROBEE_CPUPROFILE"

// stopCPUProfile ends the profile started in init; a no-op without one.
var stopCPUProfile = func() {}

func init() {
	path := os.Getenv(cpuProfileEnv)
	if path == "" || isExecShim() {
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
	stopCPUProfile = func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
