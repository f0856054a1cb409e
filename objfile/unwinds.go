package objfile

import "strings"

// unwinders are the libraries whose users unwind the stack to throw: C++
// exceptions (libstdc++, libc++) and Rust panics (libgcc_s, which Rust
// programs link for unwinding; plain C programs do not).
var unwinders = []string{"libstdc++.so", "libc++.so", "libgcc_s.so"}

// unwindEntries are functions only such objects define: personality
// routines and the unwinder's entry (static binaries, and the libraries
// above themselves).
var unwindEntries = map[string]bool{
	"__gxx_personality_v0": true, "rust_eh_personality": true, "_Unwind_RaiseException": true,
}

// unwinds reports whether exceptions or panics may pass the frames of o's
// functions: o needs an unwinding library or defines a personality
// routine. A uretprobe replaces a return address on the stack, so an
// unwind passing the call finds the kernel's trampoline, which has no
// unwind entry: C++ terminates the program. Such functions' returns are
// probed at their RET instructions (ReturnAttachPoints), which costs a
// single-step per return where a uretprobe costs one trap.
func (o *Object) unwinds() bool {
	for _, n := range o.Needed {
		for _, u := range unwinders {
			if strings.HasPrefix(n, u) {
				return true
			}
		}
	}
	for _, f := range o.Funcs {
		if unwindEntries[f.Name] {
			return true
		}
	}
	return false
}
