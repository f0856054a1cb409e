package objfile

import "testing"

// TestLineAt: the row at or below pc gives its file and line, none past the
// row that ends a sequence or before the first; lines are clamped into a
// row's 31 bits.
func TestLineAt(t *testing.T) {
	u := &unitInfo{rowFiles: []string{"a.c", "b.h"}, rows: []lineRow{
		{0x100, 0, rowLine(10, false)}, {0x110, 1, rowLine(11, false)}, {0x120, 0, rowLine(12, true)},
		{0x200, 0, rowLine(-3, false)}, {0x210, 1, rowLine(1<<40, false)}, {0x220, 0, rowLine(0, true)},
	}}
	for _, tc := range []struct {
		pc   uint64
		file string
		line int
	}{
		{0xff, "", 0}, {0x100, "a.c", 10}, {0x10f, "a.c", 10}, {0x115, "b.h", 11},
		{0x120, "", 0}, {0x1ff, "", 0}, {0x205, "a.c", 0}, {0x215, "b.h", rowEnd - 1}, {0x230, "", 0},
	} {
		if f, l := u.lineAt(tc.pc); f != tc.file || l != tc.line {
			t.Errorf("lineAt(%#x) = %s:%d, want %s:%d", tc.pc, f, l, tc.file, tc.line)
		}
	}
}
