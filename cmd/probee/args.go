package main

import (
	"flag"
	"strings"

	"github.com/probee/probee/probespec"
	"github.com/probee/probee/trace"
)

// cmdLine is a command line split into its parts before flag parsing.
type cmdLine struct {
	flags      []string // flag arguments, each value joined as -name=value
	nBefore    int      // how many of flags come before the first positional argument
	err        error    // the first flag without its value
	errAfter   bool     // err is after the first positional argument
	positional []string // arguments that are neither flags nor values: --list-probes specs
	firstPos   int      // index in args of positional[0]
	command    []string // what follows "--"
	dashDash   bool     // "--" was given
	listing    bool     // --list-probes or -l was given
}

// splitArgs splits args into flags, positional arguments and the command
// after "--", so that flags may come before or after positional arguments
// (the flag package stops at the first one). A flag's value is the next
// argument unless that is "--" or one of probee's own flags: `--list-probes
// --json SPEC` never takes --json as a spec, and `--uprobe --json` is an
// error naming the fix. `--list-probes=SPEC` and `-l=SPEC` (the flag's
// form before it became boolean) give SPEC as a positional argument.
func splitArgs(fs *flag.FlagSet, args []string) cmdLine {
	cl := cmdLine{firstPos: -1}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			cl.command, cl.dashDash = args[i+1:], true
			break
		}
		if !looksLikeFlag(a) {
			cl.addPositional(i, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		f := fs.Lookup(name)
		cl.listing = cl.listing || f != nil && isListFlag(f)
		switch {
		case f == nil || hasValue && !isListFlag(f):
			cl.flags = append(cl.flags, a) // fs.Parse reports unknown names
		case hasValue:
			cl.addPositional(i, value)
			cl.flags = append(cl.flags, "--"+f.Name)
		case isBoolFlag(f):
			cl.flags = append(cl.flags, a)
		case i+1 == len(args) || args[i+1] == "--":
			cl.fail(usagef("%s needs a value (see probee --help)", a))
		case isProbeeFlag(fs, args[i+1]):
			cl.fail(usagef("%s needs a value, but %s follows it: give the value right after %s (see probee --help)", a, args[i+1], a))
		default:
			cl.flags = append(cl.flags, a+"="+args[i+1])
			i++
		}
	}
	if cl.firstPos < 0 {
		cl.nBefore = len(cl.flags)
	}
	return cl
}

func (cl *cmdLine) addPositional(i int, a string) {
	if cl.firstPos < 0 {
		cl.firstPos, cl.nBefore = i, len(cl.flags)
	}
	cl.positional = append(cl.positional, a)
}

// fail records the first error; the scan goes on to find the positional
// arguments.
func (cl *cmdLine) fail(err error) {
	if cl.err == nil {
		cl.err, cl.errAfter = err, cl.firstPos >= 0
	}
}

// parse parses the flags into fs. A bad flag after a positional argument,
// without --list-probes, is reported as what it most likely is: part of a
// command given without "--" (probee --uprobe malloc ls -l -d).
func (cl cmdLine) parse(fs *flag.FlagSet, args []string) error {
	if cl.err != nil && !cl.errAfter {
		return cl.err
	}
	if err := fs.Parse(cl.flags[:cl.nBefore]); err != nil {
		return flagError(fs, err)
	}
	err := cl.err
	if err == nil {
		err = fs.Parse(cl.flags[cl.nBefore:])
	}
	if err != nil && len(cl.positional) > 0 && !cl.listing {
		return cl.misplacedCommand(args)
	}
	if err != nil {
		return flagError(fs, err)
	}
	return nil
}

// misplacedCommand is the error for positional arguments without
// --list-probes: a command to trace given without "--" (its own flags,
// unknown to probee, are in the hint too).
func (cl cmdLine) misplacedCommand(args []string) error {
	if pos := cl.positional[0]; looksLikeSpec(pos) {
		q := trace.Quote(pos)
		return usagef("unexpected argument %q: give a probe with its flag, e.g. probee --uprobe %s -- CMD (or list its targets: probee --list-probes %s)", pos, q, q)
	}
	end := len(args) - len(cl.command)
	if cl.dashDash {
		end--
	}
	return usagef("unexpected argument %q: put the command to trace after --, e.g. probee --uprobe malloc -- %s (or list probes with --list-probes SPEC)",
		cl.positional[0], strings.Join(args[cl.firstPos:end], " "))
}

// looksLikeSpec reports whether a reads as a probe spec given without its
// flag (libc:malloc, uprobe:x:y) rather than a command (./app, ls, /bin/x:y).
func looksLikeSpec(a string) bool {
	if !strings.Contains(a, ":") || strings.HasPrefix(a, "/") || strings.HasPrefix(a, ".") {
		return false
	}
	_, err := probespec.Parse(probespec.Uprobe, a)
	return err == nil
}

// looksLikeFlag is the flag package's test: "-" alone is an argument.
func looksLikeFlag(a string) bool { return len(a) > 1 && a[0] == '-' }

func isListFlag(f *flag.Flag) bool { return f.Name == "list-probes" || f.Name == "l" }

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// isProbeeFlag reports whether a names one of probee's flags (-v, --json=x).
// Other arguments starting with '-' (-2s, -1) can be values.
func isProbeeFlag(fs *flag.FlagSet, a string) bool {
	if !looksLikeFlag(a) || a == "--" {
		return false
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
	return fs.Lookup(name) != nil
}
