// Command churn starts short processes at a steady rate, for the
// system-wide long-run benchmark (tests/bench/53-churn.sh):
//
//	churn -bin DIR -dir TMP [-rate 350] [-d 10m] [-fresh 1s]
//
// Every 1/rate seconds it starts one command of a fixed rotation:
// /bin/true, ls /, sh -c :, the fixtures chain-fp, uselib-fp (libfx.so),
// dlmain-nofp (dlopens libdlplugin.so) and cxx, and a fresh program.
// Every -fresh it copies uselib-fp and libfx.so into a new directory
// under TMP with build-ids of their own, so that the machine keeps
// mapping files never seen before (600 programs and 600 libraries in 10
// minutes), as a build or a test farm does. It prints the processes
// started when it ends.
package main

import (
	"debug/elf"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

func main() {
	bin := flag.String("bin", "tests/fixtures/bin", "fixture directory")
	dir := flag.String("dir", os.TempDir(), "where fresh copies go")
	rate := flag.Int("rate", 350, "processes started per second")
	dur := flag.Duration("d", 10*time.Minute, "how long to run")
	fresh := flag.Duration("fresh", time.Second, "a fresh program and library this often (0: none)")
	flag.Parse()
	if err := run(*bin, *dir, *rate, *dur, *fresh); err != nil {
		fmt.Fprintln(os.Stderr, "churn:", err)
		os.Exit(1)
	}
}

func run(bin, dir string, rate int, dur, fresh time.Duration) error {
	fixed := [][]string{
		{"/bin/true"}, {"/bin/ls", "/"}, {"/bin/sh", "-c", ":"},
		{filepath.Join(bin, "chain-fp"), "1"}, {filepath.Join(bin, "uselib-fp"), "1"},
		{filepath.Join(bin, "dlmain-nofp"), "1", "0"}, {filepath.Join(bin, "cxx")},
	}
	latest, err := freshCopy(bin, dir, 0)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	start, lastFresh, started, n := time.Now(), time.Now(), 0, 1
	for now := range tick.C {
		if now.Sub(start) >= dur {
			break
		}
		if fresh > 0 && now.Sub(lastFresh) >= fresh {
			if latest, err = freshCopy(bin, dir, n); err != nil {
				return err
			}
			n, lastFresh = n+1, now
		}
		argv := latest
		if k := started % (len(fixed) + 1); k < len(fixed) {
			argv = fixed[k]
		}
		if startOne(&wg, argv) {
			started++
		}
	}
	wg.Wait()
	fmt.Printf("churn: %d processes in %.0f s (%.0f/s), %d fresh programs\n",
		started, time.Since(start).Seconds(), float64(started)/time.Since(start).Seconds(), n)
	return nil
}

// startOne starts argv and reaps it in the background.
func startOne(wg *sync.WaitGroup, argv []string) bool {
	cmd := exec.Command(argv[0], argv[1:]...)
	if cmd.Start() != nil {
		return false
	}
	wg.Add(1)
	go func() { defer wg.Done(); _ = cmd.Wait() }()
	return true
}

// freshCopy copies uselib-fp and libfx.so into DIR/fresh-N with build-ids
// of their own and returns the program's argv.
func freshCopy(bin, dir string, n int) ([]string, error) {
	d := filepath.Join(dir, fmt.Sprintf("fresh-%d", n))
	if err := os.MkdirAll(d, 0o755); err != nil {
		return nil, err
	}
	for _, name := range []string{"uselib-fp", "libfx.so"} {
		if err := copyWithBuildID(filepath.Join(bin, name), filepath.Join(d, name), uint64(n)); err != nil {
			return nil, fmt.Errorf("copy %s: %w", name, err)
		}
	}
	return []string{filepath.Join(d, "uselib-fp"), "1"}, nil
}

// copyWithBuildID copies src to dst (mode 0755) and writes id into the
// first 8 bytes of its GNU build-id.
func copyWithBuildID(src, dst string, id uint64) error {
	off, err := buildIDOffset(src)
	if err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if _, err := out.WriteAt(binary.LittleEndian.AppendUint64(nil, id+1<<48), off); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// buildIDOffset is the file offset of the build-id bytes of path's
// .note.gnu.build-id (after the note's 16-byte header: sizes, type, "GNU").
func buildIDOffset(path string) (int64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := f.Section(".note.gnu.build-id")
	if s == nil || s.Size < 16+8 {
		return 0, fmt.Errorf("%s: no build-id note", path)
	}
	return int64(s.Offset) + 16, nil
}
