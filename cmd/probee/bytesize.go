package main

import (
	"errors"
	"strconv"
	"strings"

	"github.com/probee/probee/bpf"
)

// byteSize is a size flag (--unwind-budget, --table-cache-size): bytes, or a number with K, M
// or G (powers of 1024; KiB, MiB, GiB also read). Its zero value means the
// default.
type byteSize uint64

var sizeUnits = []struct {
	suffix string
	shift  uint
}{{"kib", 10}, {"mib", 20}, {"gib", 30}, {"k", 10}, {"m", 20}, {"g", 30}}

// parseByteSize parses a size of at least 1 byte and at most max.
func parseByteSize(s string, max uint64) (uint64, error) {
	num, shift := strings.ToLower(s), uint(0)
	for _, u := range sizeUnits {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, shift = n, u.shift
			break
		}
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil || n == 0 {
		return 0, errors.New("want a size such as 512M or 2G (bytes, or K, M, G: powers of 1024)")
	}
	if n > max>>shift {
		return 0, errors.New("more than " + strconv.FormatUint(max>>30, 10) + "G")
	}
	return n << shift, nil
}

func (b *byteSize) String() string { return strconv.FormatUint(uint64(*b), 10) }

// Set makes *byteSize a flag.Value, for sizes up to the unwind table
// storage's bound.
func (b *byteSize) Set(s string) error {
	n, err := parseByteSize(s, bpf.MaxTableBudget)
	if err == nil {
		*b = byteSize(n)
	}
	return err
}
