package probespec

import (
	"strings"

	"github.com/probee/probee/internal/editdist"
)

// Parse parses a spec given with -e/--event or --list-probes (defaultKind
// Uprobe), or wherever an explicit kind prefix may override the default:
// "kprobe:vfs_read" is a kprobe whatever defaultKind is. defaultKind is the
// kind of a spec without prefix.
//
// Errors are *Error, carrying a column for a caret display.
func Parse(defaultKind Kind, text string) (Spec, error) {
	return parse(defaultKind, text, false)
}

// ParseFlag parses the argument of --uprobe, --kprobe or --tracepoint
// (flagKind Uprobe, Kprobe or Tracepoint). An explicit kind prefix may
// repeat the flag's kind or ask for its return probe ("--uprobe
// uretprobe:free"); any other kind is an error.
func ParseFlag(flagKind Kind, text string) (Spec, error) {
	return parse(flagKind, text, true)
}

func parse(kind Kind, text string, strict bool) (Spec, error) {
	s, perr := parseRaw(kind, text, strict)
	if perr != nil {
		if e := mistypedKind(text); e != nil {
			return Spec{}, e
		}
		return Spec{}, perr
	}
	if c, ok := s.canonical(); !ok {
		if len(c) > MaxLen {
			return Spec{}, errAt(text, 0, "specs are at most 4096 bytes, counting the kind prefix uprobe:", "spec too long")
		}
		return Spec{}, errAt(text, 0, "spell the matcher out, e.g. exact:NAME, demangle:NAME or regex:RE", "ambiguous spec")
	}
	return s, nil
}

// mistypedKind is the error of a spec that failed to parse and whose
// first part, before a ':', is no kind word but nearly one (uprob:libc:x):
// that, rather than what the parser stumbled on later (a third part).
func mistypedKind(text string) *Error {
	first, rest, ok := strings.Cut(text, ":")
	if !ok || !strings.Contains(rest, ":") || len(first) < 3 || isKindWord(strings.ToLower(first)) {
		return nil
	}
	var words []string // the kind words but the one- and two-letter ones
	for w := range kindWords {
		if len(w) > 2 {
			words = append(words, w)
		}
	}
	near := editdist.Nearest(strings.ToLower(first), words, 2)
	if near == "" {
		return nil
	}
	return errAt(text, 0, "did you mean "+near+":?", "unknown probe kind %q", first)
}
