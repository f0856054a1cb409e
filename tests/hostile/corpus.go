package hostile

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ReadCorpus reads the []byte values of a Go fuzz seed corpus directory
// (testdata/fuzz/FuzzX: files of "go test fuzz v1" and one value a line),
// in file name order; values of other types are left out.
func ReadCorpus(dir string) ([][]byte, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out [][]byte
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		vals, err := corpusBytes(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, vals...)
	}
	return out, nil
}

func corpusBytes(b []byte) ([][]byte, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	if !sc.Scan() || sc.Text() != "go test fuzz v1" {
		return nil, fmt.Errorf("not a fuzz corpus file")
	}
	var out [][]byte
	for sc.Scan() {
		q, ok := strings.CutPrefix(sc.Text(), "[]byte(")
		if !ok || !strings.HasSuffix(q, ")") {
			continue
		}
		v, err := strconv.Unquote(q[:len(q)-1])
		if err != nil {
			return nil, fmt.Errorf("unquote %.40s: %w", q, err)
		}
		out = append(out, []byte(v))
	}
	return out, sc.Err()
}

// Mutated writes the "mutated ELFs mapped" case into dir and returns the
// files' paths: from genuine (a fixture), seeded byte flips over its first
// 8 KiB (headers), flips anywhere and truncations, as tests/e2e's
// TestHostileFiles mutates it; each of ehFrames (unwind's FuzzParseEhFrame
// seeds) as the .eh_frame of an image with the stub; each of elfs
// (objfile's FuzzSymbolTables seeds, small ELF files) as is. Empty files
// are left out: they cannot be mapped.
func Mutated(dir, genuine string, ehFrames, elfs [][]byte) ([]string, error) {
	data, err := os.ReadFile(genuine)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	rng := rand.New(rand.NewSource(44))
	for i := range 8 {
		files[fmt.Sprintf("flip-head-%d", i)] = flipped(rng, data, min(len(data), 8192), 64)
		files[fmt.Sprintf("flip-any-%d", i)] = flipped(rng, data, len(data), 256)
		files[fmt.Sprintf("trunc-%d", i)] = data[:1+rng.Intn(len(data)-1)]
	}
	for i, eh := range ehFrames {
		sec := Section{Name: ".eh_frame", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC, Addr: 0x10000, Off: 0x10000, Data: eh}
		im := Image{Progs: []Prog{loadAll}, Sections: append(stubSections(StubName), sec)}
		files[fmt.Sprintf("eh-frame-seed-%d", i)], _ = im.Bytes()
	}
	for i, b := range elfs {
		files[fmt.Sprintf("elf-seed-%d", i)] = b
	}
	var paths []string
	for name, b := range files {
		if len(b) == 0 {
			continue
		}
		p, err := writeFile(dir, name, b)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths, nil
}

// flipped is a copy of data with n random bytes of its first span bytes
// changed.
func flipped(rng *rand.Rand, data []byte, span, n int) []byte {
	b := bytes.Clone(data)
	for range n {
		b[rng.Intn(span)] ^= byte(1 + rng.Intn(255))
	}
	return b
}
