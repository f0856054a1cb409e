package probespec

import (
	"strconv"
	"strings"
)

// String returns the canonical text of the spec: the full kind word
// (uretprobe/kretprobe for return probes), the target, then the matcher in
// its bare form when that reads back as the same matcher, else with its
// keyword; offsets in 0x-hex. Parse(Uprobe, s.String()) == s for every spec
// Parse returns. Examples: "uprobe:libc:malloc*",
// "uretprobe:libc:malloc+0x10", "uprobe:./app:src/main.c:42",
// "kprobe:ext4:ext4_file_*", "tracepoint:sched:sched_switch",
// "usdt:/usr/bin/python3.11:python:function__entry".
func (s Spec) String() string {
	c, _ := s.canonical()
	return c
}

// canonical returns the first candidate spelling that parses back to s, and
// whether there was one; if none, the most explicit spelling.
func (s Spec) canonical() (string, bool) {
	cands := s.spellings()
	if len(cands) == 0 {
		return "<invalid spec>", false
	}
	for _, c := range cands {
		if v, err := parseRaw(Uprobe, c, false); err == nil && v == s {
			return c, true
		}
	}
	return cands[len(cands)-1], false
}

// spellings lists candidate spellings of s, preferred first.
func (s Spec) spellings() []string {
	var head strings.Builder
	head.WriteString(s.kindWord())
	head.WriteByte(':')
	switch s.Kind {
	case Tracepoint:
		return []string{head.String() + s.Tracepoint.Category + ":" + s.Tracepoint.Name}
	case USDT:
		return []string{head.String() + s.usdtBody()}
	case Uprobe, Kprobe:
	default:
		return nil
	}
	if s.Target.Kind != TargetNone {
		head.WriteString(s.Target.Name)
		head.WriteByte(':')
	}
	h := head.String()
	if s.IsSource() {
		return []string{h + s.Source.File + ":" + strconv.Itoa(s.Source.Line)}
	}
	off := ""
	if s.Offset != 0 {
		off = "+0x" + strconv.FormatUint(s.Offset, 16)
	}
	p := s.Matcher.Pattern
	switch s.Matcher.Kind {
	case MatchRegex:
		if off == "" {
			return []string{h + "regex:" + p, h + "/" + p + "/"}
		}
		return []string{h + "/" + p + "/" + off}
	case MatchExact, MatchGlob, MatchDemangled:
		c := []string{h + p + off, h + s.Matcher.Kind.String() + ":" + p + off}
		if off == "" { // "operator+0" reads back as operator at +0 without an explicit offset
			c = append(c, h+p+"+0x0", h+s.Matcher.Kind.String()+":"+p+"+0x0")
		}
		return c
	}
	return nil
}

// usdtBody writes [TARGET:][PROVIDER:]NAME.
func (s Spec) usdtBody() string {
	b := s.USDT.Name
	if s.USDT.Provider != "" {
		b = s.USDT.Provider + ":" + b
	}
	if s.Target.Kind != TargetNone {
		b = s.Target.Name + ":" + b
	}
	return b
}

func (s Spec) kindWord() string {
	switch {
	case s.Kind == Uprobe && s.Ret:
		return "uretprobe"
	case s.Kind == Kprobe && s.Ret:
		return "kretprobe"
	}
	return s.Kind.String()
}
