package objfile

import (
	"os"
	"testing"
)

// Objects that exceptions or panics pass (C++, Rust, and the unwinding
// libraries themselves) and objects they do not (C, Go, libc).
func TestObjectUnwinds(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{fixture(t, "unwindfx"), true},    // C++, needs libstdc++
		{fixture(t, "rustfx"), true},      // Rust, needs libgcc_s
		{fixture(t, "latency-fp"), false}, // C
		{fixture(t, "golat"), false},      // Go: returns are RET probes anyway
		{"/usr/lib/x86_64-linux-gnu/libstdc++.so.6", true},
		{"/usr/lib/x86_64-linux-gnu/libgcc_s.so.1", true},
		{"/usr/lib/x86_64-linux-gnu/libc.so.6", false},
	}
	for _, tt := range tests {
		if _, err := os.Stat(tt.path); err != nil {
			t.Fatalf("%s: %v", tt.path, err)
		}
		o, err := LoadObject(tt.path, "")
		if err != nil {
			t.Fatalf("%s: %v", tt.path, err)
		}
		if o.Unwinds != tt.want {
			t.Errorf("%s: Unwinds %v, want %v (needs %v)", tt.path, o.Unwinds, tt.want, o.Needed)
		}
	}
}
