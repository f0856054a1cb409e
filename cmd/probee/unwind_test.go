package main

import (
	"os"
	"testing"
)

func TestRootOf(t *testing.T) {
	tests := []struct {
		name string
		pid  int
		want string
	}{
		{"same root as probee", os.Getpid(), ""},
		{"no such process", 1 << 30, "/proc/1073741824/root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rootOf(tt.pid); got != tt.want {
				t.Errorf("rootOf(%d) = %q, want %q", tt.pid, got, tt.want)
			}
		})
	}
}
