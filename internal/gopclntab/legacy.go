package gopclntab

// legacyFuncs returns the functions of a table older than Go 1.20, which
// debug/gosym read.
func (t *Table) legacyFuncs() []Func {
	out := make([]Func, 0, len(t.legacy.Funcs))
	for _, fn := range t.legacy.Funcs {
		if fn.End > fn.Entry && fn.Name != "" {
			out = append(out, Func{Name: symName(fn.Name), Entry: fn.Entry, End: fn.End})
		}
	}
	return out
}

// legacyFrames returns the frame of pc in a table older than Go 1.20: the
// physical function with the line executing at pc (its inline trees have
// another layout, not read).
func (t *Table) legacyFrames(pc uint64) []Frame {
	file, line, fn := t.legacy.PCToLine(pc)
	if fn == nil {
		return nil
	}
	if line <= 0 {
		file, line = "", 0
	}
	return []Frame{{Func: symName(fn.Name), File: file, Line: line}}
}
