package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probee/probee/internal/testgate"
	"github.com/probee/probee/tests/hostile"
	"golang.org/x/sys/unix"
)

// The cases of issue #44, one test each: what user nobody did to a root
// probee, and what probee did before (see tests/hostile for the files).

// stubArg is hostile-mapper's -c of a crafted file's stub.
func stubArg(path string) []string {
	return []string{"-c", fmt.Sprintf("%s:%#x", path, hostile.StubOff)}
}

// crafted is a case whose attacker maps and calls the files makers write.
func crafted(makers ...func(dir string) (string, error)) hostileCase {
	return hostileCase{setup: func(t *testing.T, dir string) []string {
		argv := []string{mapperBin(t)}
		for _, mk := range makers {
			p, err := mk(dir)
			if err != nil {
				t.Fatal(err)
			}
			argv = append(argv, stubArg(p)...)
		}
		return argv
	}}
}

// Case 1: a 16 KB .so without section headers whose PT_LOAD claims 1 TiB
// (was: fatal out-of-memory, exit 2, every output lost).
func TestHostileHugeFilesz(t *testing.T) { runHostile(t, crafted(hostile.HugeFilesz)) }

// Case 1 via LD_PRELOAD and as a traced command: nobody runs a dynamic
// program (clock-nofp) with that .so preloaded (ld.so maps its 1 TiB),
// sampled and probed system-wide, traced by -p, and run as -- CMD (was:
// the same fatal out-of-memory, exit 2, every output lost).
func TestHostileHugeFileszPreload(t *testing.T) {
	prog := fixture(t, "clock-nofp")
	runHostile(t, hostileCase{
		setup: func(t *testing.T, dir string) []string {
			so, err := hostile.HugeFileszPreload(dir)
			if err != nil {
				t.Fatal(err)
			}
			return []string{"env", "LD_PRELOAD=" + so, prog}
		},
		seconds: func(secs string) []string { return []string{secs} },
		probe:   func([]string) string { return prog + ":c_read" },
		started: func(t *testing.T, a *attacker) { waitMapped(t, a.pid, "/huge-filesz-preload.so") },
		check: func(t *testing.T, mode string, r hostileRun, _ *attacker) {
			if (mode == "pid" || mode == "cmd") && !anyStack(r.stacks, ";c_loop;") {
				t.Errorf("no stack of clock-nofp's c_loop: the preloading process was not traced")
			}
		},
	})
}

// waitMapped waits until process pid maps a file whose path ends in name.
func waitMapped(t *testing.T, pid int, name string) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasSuffix(line, name) {
				return
			}
		}
	}
	t.Fatalf("process %d does not map %s after 5 s", pid, name)
}

// Case 2: a sparse 40 GiB /tmp/perf-PID.map of a process running code in
// anonymous executable memory (was: fatal out-of-memory; 2 GiB took
// 2.1 GB). Its first line still names the code.
func TestHostilePerfMapSparse(t *testing.T) {
	runHostile(t, hostileCase{
		setup: func(t *testing.T, dir string) []string {
			return []string{mapperBin(t), "-j", fmt.Sprint(int64(40) << 30)}
		},
		check: func(t *testing.T, mode string, r hostileRun, _ *attacker) {
			// Not the -- CMD run: its samples before the new process's
			// tables are loaded (after its perf map is read, up to the
			// 512 MiB budget) do not reach the JIT frame.
			if (mode == "sample" || mode == "pid") && !anyStack(r.stacks, ";jit_hostile;") {
				t.Errorf("no stack of the attacker names jit_hostile:\n%s", foldedLines(r.stacks))
			}
		},
	})
}

// Case 3: a mapped .so swapped with a FIFO in a loop (renameat2
// RENAME_EXCHANGE): probee opened the FIFO and hung (-d, SIGINT and
// SIGTERM did not end it).
func TestHostileFIFOSwap(t *testing.T) {
	runHostile(t, hostileCase{setup: func(t *testing.T, dir string) []string {
		so, err := hostile.Plain(dir, "swap.so")
		if err != nil {
			t.Fatal(err)
		}
		return append(append([]string{mapperBin(t)}, stubArg(so)...), "-x", so+":"+filepath.Join(dir, "fifo"))
	}})
}

var bombOnce struct {
	sync.Once
	zlib []byte
	err  error
}

// bomb is hostile.DWARFBomb with the deflated zeros made once a run.
func bomb(dir string) (string, error) {
	bombOnce.Do(func() { bombOnce.zlib, bombOnce.err = hostile.Deflate(tmpDir, hostile.BombSize) })
	if bombOnce.err != nil {
		return "", bombOnce.err
	}
	return hostile.DWARFBomb(dir, bombOnce.zlib)
}

// Case 4: zlib .debug_line and .debug_str inflating to 3 GiB, and a
// sparse 4 GiB .debug_line (was: OOM-killed at 4 GiB while finishing).
func TestHostileDWARFBomb(t *testing.T) { runHostile(t, crafted(bomb, hostile.SparseDebugLine)) }

// Case 5: an .eh_frame FDE of 32M rows (was: 3.57 GB, 48 s).
func TestHostileManyRows(t *testing.T) { runHostile(t, crafted(hostile.ManyRows)) }

// Case 5: 65,535 section headers, nearly all .debug_types (was: 1:48 to
// 2:41 for a 3 s run).
func TestHostileJunkSections(t *testing.T) { runHostile(t, crafted(hostile.JunkSections)) }

// copyCase runs a copy of root's spin-nofp that mk writes, as nobody:
// same build-id, another file.
func copyCase(t *testing.T, mk func(dir, genuine string) (string, error), probe string) hostileCase {
	genuine := fixture(t, "spin-nofp")
	return hostileCase{
		setup: func(t *testing.T, dir string) []string {
			p, err := mk(dir, genuine)
			if err != nil {
				t.Fatal(err)
			}
			return []string{p}
		},
		seconds: func(secs string) []string { return []string{secs} },
		probe:   func(argv []string) string { return argv[0] + ":" + probe },
	}
}

// Case 6: a copy of root's binary with its build-id and spin_leaf renamed
// spin_EVIL: root's own process was named from it in the same run.
func TestHostileBuildIDSpoof(t *testing.T) {
	runHostile(t, copyCase(t, func(dir, g string) (string, error) {
		return hostile.Renamed(dir, "spin-evil", g, "leaf", "EVIL")
	}, "spin_EVIL"))
}

// Case 6: a copy of root's binary with its build-id and an .eh_frame of
// nops: its table, in the on-disk table cache, made later runs of the
// genuine binary [truncated]. The last run is of the genuine binary
// alone, with the cache the attacked runs wrote.
func TestHostileTableCachePoison(t *testing.T) {
	c := copyCase(t, func(dir, g string) (string, error) { return hostile.CorruptEhFrame(dir, "spin-corrupt", g) }, "spin_leaf")
	c.extra = []string{"--table-cache-dir", t.TempDir()}
	runHostile(t, c)
	bin := testgate.PrivateFixture(t, fixture(t, "spin-nofp"))
	r := hostileProbee(t, append(c.extra, "--sample", "-F", "199", "--", bin, "2")...)
	checkGenuine(t, r.stacks)
}

// Case 7: a chroot whose /tmp is an absolute link (to /var/tmp/X): its
// process's perf map was read from the host's /var/tmp/X, here one naming
// its code HOST_jit. It must be read inside the root: jit_hostile.
func TestHostileChrootTmp(t *testing.T) {
	host, err := os.MkdirTemp("/var/tmp", "probee-hostile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(host) })
	runHostile(t, hostileCase{
		chroot: true,
		setup: func(t *testing.T, dir string) []string {
			b, err := os.ReadFile(mapperBin(t))
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, "hostile-mapper"), b, 0o755)
			}
			if err == nil {
				err = hostile.ChrootTmp(dir, host)
			}
			if err != nil {
				t.Fatal(err)
			}
			return []string{"/hostile-mapper", "-j", "0"}
		},
		probe: func([]string) string { return mapperBin(t) + ":hostile_leaf" },
		started: func(t *testing.T, a *attacker) {
			line := fmt.Sprintf("%s 20 HOST_jit\n", a.jit)
			if err := os.WriteFile(filepath.Join(host, fmt.Sprintf("perf-%d.map", a.pid)), []byte(line), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		check: func(t *testing.T, mode string, r hostileRun, _ *attacker) {
			if mode == "uprobe" {
				return // the copy in the chroot is not the probed file
			}
			if anyStack(r.stacks, "HOST_jit") || !anyStack(r.stacks, ";jit_hostile;") {
				t.Errorf("the chrooted attacker's code is not named jit_hostile from its own perf map:\n%s", foldedLines(r.stacks))
			}
		},
	})
}

// Case 7: a .gnu_debuglink beside .debug, a link to a directory only root
// may read (as .debug -> /etc had probee open /etc/shadow): the debug file
// there must not be opened, nor its SECRET_stub name any frame.
func TestHostileDebugLinkEscape(t *testing.T) {
	var watches []int
	t.Cleanup(func() {
		for _, fd := range watches {
			unix.Close(fd)
		}
	})
	runHostile(t, hostileCase{
		setup: func(t *testing.T, dir string) []string {
			secret := t.TempDir() // root's, 0700
			_, err := hostile.SecretDebug(secret)
			if err != nil {
				t.Fatal(err)
			}
			watches = append(watches, watchOpens(t, secret))
			so, err := hostile.DebugLinkEscape(dir, secret)
			if err != nil {
				t.Fatal(err)
			}
			return append([]string{mapperBin(t)}, stubArg(so)...)
		},
		check: func(t *testing.T, _ string, r hostileRun, _ *attacker) {
			if anyStack(r.stacks, hostile.SecretName) {
				t.Errorf("a frame is named from the debug file behind the link:\n%s", foldedLines(r.stacks))
			}
			for _, fd := range watches {
				if opened(fd) {
					t.Errorf("probee opened %s behind the .debug link", hostile.DebugLinkName)
				}
			}
		},
	})
}

// Mutated fixtures mapped (tests/hostile.Mutated: byte flips, truncations,
// the fuzz seeds of unwind's .eh_frame parser and objfile's symbol
// tables).
func TestHostileMutatedCorpus(t *testing.T) {
	eh, err := hostile.ReadCorpus("../../unwind/testdata/fuzz/FuzzParseEhFrame")
	if err != nil {
		t.Fatal(err)
	}
	elfs, err := hostile.ReadCorpus("../../objfile/testdata/fuzz/FuzzSymbolTables")
	if err != nil {
		t.Fatal(err)
	}
	genuine := fixture(t, "spin-nofp")
	runHostile(t, hostileCase{setup: func(t *testing.T, dir string) []string {
		paths, err := hostile.Mutated(dir, genuine, eh, elfs)
		if err != nil {
			t.Fatal(err)
		}
		argv := []string{mapperBin(t)}
		for _, p := range paths {
			argv = append(argv, "-m", p)
		}
		return argv
	}})
}

func anyStack(stacks map[string]uint64, sub string) bool {
	for st := range stacks {
		if strings.Contains(st, sub) {
			return true
		}
	}
	return false
}

// watchOpens returns an inotify descriptor that records opens of the
// files in dir.
func watchOpens(t *testing.T, dir string) int {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err == nil {
		_, err = unix.InotifyAddWatch(fd, dir, unix.IN_OPEN)
	}
	if err != nil {
		t.Fatalf("inotify on %s: %v", dir, err)
	}
	return fd
}

// opened reports whether the watch of fd saw an open (and drains it).
func opened(fd int) bool {
	buf := make([]byte, 4096)
	n, _ := unix.Read(fd, buf)
	return n > 0
}
