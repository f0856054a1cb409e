package main

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/probee/probee/internal/editdist"
)

// A flag that takes one value, given twice with two values (-F 99 -F
// 199, -p 1 -p 2), leaves a guess which one was meant: the flag package
// takes the last, and probee traced the second pid alone without a
// word. onceFlags makes that a usage error naming both; the same value
// twice is fine. The repeatable flags (the probes, -o, --label) add up.
// A duration without its unit (-d 5) says what one looks like, where
// the flag package said "parse error".

// repeatable are the flags given as often as wanted.
var repeatable = map[string]bool{
	"uprobe": true, "kprobe": true, "tracepoint": true, "usdt": true, "event": true, "e": true,
	"o": true, "output": true, "label": true,
}

// secretFlags are never echoed in a message.
var secretFlags = map[string]bool{"push-basic-auth": true, "push-token": true}

// flagAliases names each long form by its short one: both set one thing.
var flagAliases = map[string]string{
	"frequency": "F", "duration": "d", "pid": "p", "verbose": "v", "quiet": "q",
	"list-probes": "l", "help": "h",
}

// onceFlags wraps every flag of fs but the repeatable ones in a onceValue.
func onceFlags(fs *flag.FlagSet) {
	given := map[string]*onceGiven{}
	fs.VisitAll(func(f *flag.Flag) {
		if repeatable[f.Name] {
			return
		}
		key := f.Name
		if short, ok := flagAliases[key]; ok {
			key = short
		}
		if given[key] == nil {
			given[key] = &onceGiven{}
		}
		f.Value = &onceValue{Value: f.Value, name: f.Name, given: given[key]}
	})
}

// onceGiven is the value a flag (and its alias) was given first.
type onceGiven struct {
	name, value string
	set         bool
}

// onceValue is a flag's Value refusing a second, different value.
type onceValue struct {
	flag.Value
	name  string
	given *onceGiven
}

func (v *onceValue) Set(s string) error {
	if g := v.given; g.set && g.value != s {
		if secretFlags[g.name] {
			return fmt.Errorf("%s%s was given already: give it once", dashes(g.name), g.name)
		}
		return fmt.Errorf("%s%s %s was given already: give it once", dashes(g.name), g.name, g.value)
	}
	if err := v.Value.Set(s); err != nil {
		return v.explain(s, err)
	}
	*v.given = onceGiven{v.name, s, true}
	return nil
}

// explain is err, or for a duration what one looks like.
func (v *onceValue) explain(s string, err error) error {
	g, ok := v.Value.(flag.Getter)
	if !ok {
		return err
	}
	if _, ok := g.Get().(time.Duration); !ok {
		return err
	}
	if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
		return fmt.Errorf("a duration needs its unit, such as %ss or %sms", s, s)
	}
	return fmt.Errorf("want a duration such as 5s, 500ms or 2m")
}

// IsBoolFlag keeps a boolean flag's form (-v, without a value).
func (v *onceValue) IsBoolFlag() bool {
	b, ok := v.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// didYouMean is " (did you mean --NAME?)" for the flag of fs nearest to
// name within two edits (a letter left out, added, changed), or "".
// One-letter flags are offered only for short names.
func didYouMean(fs *flag.FlagSet, name string) string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if len(f.Name) > 1 || len(name) <= 2 {
			names = append(names, f.Name)
		}
	})
	best := editdist.Nearest(name, names, min(2, len(name)-1))
	if best == "" {
		return ""
	}
	return " (did you mean " + dashes(best) + best + "?)"
}
