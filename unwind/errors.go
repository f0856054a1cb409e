package unwind

import "fmt"

// FormatError reports malformed call-frame information: which section, at
// which byte offset, and what was wrong with it.
type FormatError struct {
	Section string // ".eh_frame", ".debug_frame", "maps", ...
	Offset  int64  // byte offset within the section
	Msg     string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s at offset %#x: %s", e.Section, e.Offset, e.Msg)
}

// errTruncated is the message for reads past the end of a record.
const errTruncated = "truncated record"
