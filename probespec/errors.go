package probespec

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Error is a spec syntax error. It carries the 1-based column (in runes) of
// the offending text so callers can show a caret under it.
type Error struct {
	// Pos is the 1-based rune column of the error in Input; it may be one
	// past the last rune when something is missing at the end.
	Pos int
	// Input is the spec text as given.
	Input string
	// Msg says what went wrong, e.g. `invalid offset "0xZZ"`.
	Msg string
	// Hint says what to write instead; it may be empty.
	Hint string
}

// Error formats the error as "1:COL: MSG: HINT" (the spec is one line).
func (e *Error) Error() string {
	if e.Hint == "" {
		return fmt.Sprintf("1:%d: %s", e.Pos, e.Msg)
	}
	return fmt.Sprintf("1:%d: %s: %s", e.Pos, e.Msg, e.Hint)
}

// caretWindow is the most runes of the input Caret shows on its first line.
const caretWindow = 72

// Caret returns two lines without a trailing newline: the input, then a
// caret under column Pos. Control characters and invalid UTF-8 are shown as
// U+FFFD so the caret stays aligned (one column per rune is assumed); long
// inputs are cut to a window around the caret, elided parts shown as "…".
func (e *Error) Caret() string {
	runes := displayRunes(e.Input)
	col := max(e.Pos-1, 0)
	col = min(col, len(runes))
	start, end := 0, len(runes)
	prefix, suffix := "", ""
	if len(runes) > caretWindow {
		start = max(col-caretWindow/2, 0)
		end = min(start+caretWindow, len(runes))
		start = max(end-caretWindow, 0)
		if start > 0 {
			prefix = "…"
		}
		if end < len(runes) {
			suffix = "…"
		}
	}
	var b strings.Builder
	b.WriteString(prefix)
	b.WriteString(string(runes[start:end]))
	b.WriteString(suffix)
	b.WriteByte('\n')
	b.WriteString(strings.Repeat(" ", utf8.RuneCountInString(prefix)+col-start))
	b.WriteByte('^')
	return b.String()
}

// displayRunes splits s into runes for display, replacing control characters
// and invalid bytes (each counted as one column, as errors count them).
func displayRunes(s string) []rune {
	out := make([]rune, 0, len(s))
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError || unicode.IsControl(r) {
			r = utf8.RuneError
		}
		out = append(out, r)
		s = s[n:]
	}
	return out
}

// column converts a byte offset in s to a 1-based rune column.
func column(s string, off int) int {
	off = min(max(off, 0), len(s))
	return utf8.RuneCountInString(s[:off]) + 1
}

// errAt builds an *Error at byte offset off of in.
func errAt(in string, off int, hint, format string, args ...any) *Error {
	return &Error{Pos: column(in, off), Input: in, Msg: fmt.Sprintf(format, args...), Hint: hint}
}
