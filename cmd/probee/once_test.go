package main

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// A flag given twice with one value, a boolean given twice, and the
// repeatable flags are fine.
func TestFlagsGivenTwice(t *testing.T) {
	cfg, err := parseArgs([]string{"--uprobe", "malloc", "--uprobe", "free", "-F", "99", "--frequency", "99",
		"-v", "-v", "-d", "2s", "-o", "a.folded", "-o", "b.svg", "--", "true"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.probes) != 2 || cfg.freq != 99 || !cfg.verbose || cfg.duration != 2*time.Second || len(cfg.outputs) != 2 {
		t.Errorf("probes %d, -F %d, -v %v, -d %v, outputs %d; want 2, 99, true, 2s, 2", len(cfg.probes), cfg.freq, cfg.verbose, cfg.duration, len(cfg.outputs))
	}
}

// A spec given twice (in one spelling or another) is traced once, with a
// note.
func TestRepeatedSpecs(t *testing.T) {
	var b strings.Builder
	cfg, err := parseArgs([]string{"--uprobe", "libc:malloc", "-e", "uprobe:libc:malloc", "--uprobe", "libc:free",
		"--uprobe", "libc:malloc", "--", "true"}, &b)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range cfg.probes {
		got = append(got, p.text)
	}
	want := "probee: -e 'uprobe:libc:malloc' is 'libc:malloc' again: traced once\n" +
		"probee: --uprobe 'libc:malloc' is 'libc:malloc' again: traced once\n"
	if !slices.Equal(got, []string{"libc:malloc", "libc:free"}) || b.String() != want {
		t.Errorf("probes %q, stderr %q; want [libc:malloc libc:free] and %q", got, b.String(), want)
	}
}
