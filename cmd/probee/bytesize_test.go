package main

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/probee/probee/bpf"
)

func TestParseByteSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
	}{
		{"1", 1}, {"4096", 4096}, {"64K", 64 << 10}, {"64k", 64 << 10}, {"64KiB", 64 << 10},
		{"512M", 512 << 20}, {"512mib", 512 << 20}, {"2G", 2 << 30}, {"16GiB", 16 << 30},
	} {
		if got, err := parseByteSize(c.in, 16<<30); got != c.want || err != nil {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "0", "0M", "M", "-1M", "1.5G", "12X", "1 M", "17G", "99999999999999999999"} {
		if got, err := parseByteSize(bad, 16<<30); err == nil {
			t.Errorf("parseByteSize(%q) = %d, want an error", bad, got)
		}
	}
}

// --unwind-budget reaches the config; 0 there means bpf's default, the
// one the help text states.
func TestUnwindBudgetFlag(t *testing.T) {
	if want := fmt.Sprintf("(default %dM;", bpf.DefaultTableBudget>>20); !strings.Contains(helpText, want) {
		t.Errorf("the help text does not state the default budget: %q", want)
	}
	cfg, err := parseArgs([]string{"--uprobe", "malloc"}, io.Discard)
	if err != nil || cfg.unwindBudget != 0 {
		t.Fatalf("default: %d, %v", cfg.unwindBudget, err)
	}
	cfg, err = parseArgs([]string{"--unwind-budget", "64M", "--uprobe", "malloc"}, io.Discard)
	if err != nil || cfg.unwindBudget != 64<<20 {
		t.Fatalf("--unwind-budget 64M: %d, %v", cfg.unwindBudget, err)
	}
}
