package probespec

import (
	"strings"
	"testing"
)

func BenchmarkParse(b *testing.B) {
	inputs := []string{
		"malloc",
		"libc:malloc*",
		"uretprobe:/usr/lib/x86_64-linux-gnu/libc.so.6:malloc+0x10",
		"./app:demangle:std::vector<*>::push_back*",
		"kprobe:ext4:ext4_file_*",
		"tracepoint:sched:sched_switch",
		"malloc+0xZZ",
	}
	for _, in := range inputs {
		b.Run(strings.NewReplacer("/", "_", ":", "_").Replace(in), func(b *testing.B) {
			for b.Loop() {
				_, _ = Parse(Uprobe, in)
			}
		})
	}
	// The slowest legal shape: a path with a separator every other byte.
	worst := "/" + strings.Repeat("a:", (MaxLen-16)/2) + "x"
	b.Run("worst-path", func(b *testing.B) {
		b.SetBytes(int64(len(worst)))
		for b.Loop() {
			_, _ = Parse(Uprobe, worst)
		}
	})
}
