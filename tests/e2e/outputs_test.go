package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// sharedTmp makes a sticky world-writable directory like /tmp, with a
// directory of root's (the victim) outside it.
func sharedTmp(t *testing.T) (tmp, victim string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "probee-shared") // reachable by nobody
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	tmp, victim = filepath.Join(dir, "tmp"), filepath.Join(dir, "victim")
	os.Mkdir(tmp, 0o777)
	os.Chmod(tmp, os.ModeSticky|0o777)
	os.Mkdir(victim, 0o755)
	if err := os.WriteFile(filepath.Join(victim, "index.html"), []byte("root's page"), 0o644); err != nil {
		t.Fatal(err)
	}
	return tmp, victim
}

// plantAsNobody makes the link name -> target as user nobody.
func plantAsNobody(t *testing.T, target, name string) {
	t.Helper()
	cmd := exec.Command("ln", "-s", target, name)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ln -s as nobody: %v: %s", err, out)
	}
}

// checkVictim fails when anything in victim was added or changed.
func checkVictim(t *testing.T, victim string) {
	t.Helper()
	entries, _ := os.ReadDir(victim)
	b, _ := os.ReadFile(filepath.Join(victim, "index.html"))
	if len(entries) != 1 || string(b) != "root's page" {
		t.Errorf("probee wrote into %s: %v, index.html %.40q", victim, entries, b)
	}
}

// Issue 44: another user plants a link at probee's -o path in a shared
// directory, to a directory of root's. Before the run, probee refuses it
// (exit 2, before tracing), also as a directory on the way; during the
// run, it keeps the file it planned (the flamegraph replaces the link)
// and writes nothing through it.
func TestOutputLinkPlanted(t *testing.T) {
	testgate.Root(t)
	chain := fixture(t, "chain-fp")
	t.Run("before", func(t *testing.T) {
		tmp, victim := sharedTmp(t)
		y := filepath.Join(tmp, "y.svg")
		plantAsNobody(t, victim, y)
		r := run(t, "", "--uprobe", chain+":leaf", "-o", y, "--", chain, "1")
		want := "probee: -o " + y + ": is a symbolic link to the directory " + victim + ": probee does not write through links"
		if r.code != 2 || !strings.HasPrefix(r.stderr, want) {
			t.Errorf("exit %d, stderr %q; want exit 2 and %q", r.code, r.stderr, want)
		}
		checkVictim(t, victim)
	})
	t.Run("parent", func(t *testing.T) {
		tmp, victim := sharedTmp(t)
		sub := filepath.Join(tmp, "sub")
		plantAsNobody(t, victim, sub)
		r := run(t, "", "--uprobe", chain+":leaf", "-o", sub+"/y.svg", "-o", sub+"/new/", "--", chain, "1")
		want := "probee: -o " + sub + "/y.svg: " + sub + " is a symbolic link that uid 65534 made in the shared directory " + tmp
		if r.code != 2 || !strings.HasPrefix(r.stderr, want) {
			t.Errorf("exit %d, stderr %q; want exit 2 and %q", r.code, r.stderr, want)
		}
		checkVictim(t, victim)
	})
	t.Run("during", func(t *testing.T) {
		tmp, victim := sharedTmp(t)
		y, out := filepath.Join(tmp, "y.svg"), filepath.Join(tmp, "out")
		asNobody := "setpriv --reuid=65534 --regid=65534 --clear-groups "
		plant := asNobody + `ln -s "$0" "$1" && ` + asNobody + `ln -s "$0" "$2" && exec "$3" 1`
		r := run(t, "", "--uprobe", chain+":leaf", "-o", y, "-o", out+"/", "--", "sh", "-c", plant, victim, y, out, chain)
		want := "probee: -o " + out + "/: " + out + " changed while probee ran (it is now a link or a file): not writing there"
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("exit %d; want 1 and %q", r.code, want)
		}
		if fi, err := os.Lstat(y); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: %v, want the flamegraph in the link's place", y, err)
		}
		if b, _ := os.ReadFile(y); !strings.Contains(string(b), "<svg") {
			t.Errorf("%s is not a flamegraph: %.60q", y, b)
		}
		checkVictim(t, victim)
	})
}

// Issue 44: an existing -o directory that another user made (nobody's
// /tmp/out) or that any user may write in without the sticky bit is
// refused before tracing (exit 2, nothing written there): its owner, or
// anyone, could swap probee's files in it. Root's sticky one is written.
func TestOutputDirPlanted(t *testing.T) {
	testgate.Root(t)
	chain := fixture(t, "chain-fp")
	for _, tc := range []struct {
		name  string
		owner int
		mode  os.FileMode
		want  string // stderr's start after "probee: -o OUT/: ", "" for exit 0
	}{
		{"nobody's", 65534, 0o777, "the directory OUT is owned by uid 65534 (nobody), not by root or by probee's user: " +
			"its owner could swap probee's files there; choose another path or remove it"},
		{"world-writable", 0, 0o777, "the directory OUT is world-writable without the sticky bit (mode 0777): " +
			"any user could swap probee's files there; choose another path or remove it"},
		{"root's sticky", 0, os.ModeSticky | 0o777, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp, _ := sharedTmp(t)
			out := filepath.Join(tmp, "out")
			os.Mkdir(out, 0o700)
			os.Chmod(out, tc.mode)
			if err := os.Chown(out, tc.owner, tc.owner); err != nil {
				t.Fatal(err)
			}
			r := run(t, "", "--uprobe", chain+":leaf", "-o", out+"/", "--", chain, "1")
			entries, _ := os.ReadDir(out)
			if tc.want == "" {
				if r.code != 0 || len(entries) == 0 {
					t.Errorf("exit %d, %d files in %s, stderr %q; want exit 0 and the outputs", r.code, len(entries), out, r.stderr)
				}
				return
			}
			want := "probee: -o " + out + "/: " + strings.ReplaceAll(tc.want, "OUT", out)
			if r.code != 2 || !strings.HasPrefix(r.stderr, want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", r.code, r.stderr, want)
			}
			if len(entries) != 0 {
				t.Errorf("probee wrote into %s: %v", out, entries)
			}
		})
	}
}

// fullShell mounts a tmpfs of 256 KiB at $1 in the private mount
// namespace unshare(1) makes, puts an older a.svg there, fills it up and
// runs probee (the rest of the arguments); then it prints probee's exit
// code and what the tmpfs holds. The host never sees the mount.
const fullShell = `small=$1; shift
mount -t tmpfs -o size=256k tmpfs "$small" || exit 98
echo old > "$small/a.svg"
dd if=/dev/zero of="$small/fill" bs=4k 2>/dev/null
"$@"; echo "exit=$?"
ls -A "$small"; cat "$small/a.svg"`

// Issue 44: a full disk loses only the outputs bound for it. The others
// are written (here on another file system), the failed ones leave no
// file behind (an older one stays as it was), each failure is reported,
// and probee exits 1.
func TestOutputDiskFull(t *testing.T) {
	testgate.Root(t)
	chain := fixture(t, "chain-fp")
	dir := t.TempDir()
	small, other := filepath.Join(dir, "small"), filepath.Join(dir, "other")
	os.Mkdir(small, 0o755)
	os.Mkdir(other, 0o755)
	cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", fullShell, "sh", small,
		probee, "--uprobe", chain+":leaf", "-o", small+"/a.svg", "-o", small+"/d/", "-o", other+"/b.folded",
		"-o", other+"/p.pb.gz", "--", chain, "1")
	r := runCmd(t, cmd)
	t.Logf("stderr:\n%s", r.stderr)
	if r.code == 98 {
		t.Fatalf("could not mount a tmpfs in a private namespace: %s", r.stderr)
	}
	if want := "exit=1\na.svg\nfill\nold\n"; r.stdout != want {
		t.Errorf("exit code and the full tmpfs:\n%s\nwant\n%s", r.stdout, want)
	}
	for _, want := range []string{
		"probee: -o " + small + "/a.svg: write " + small + "/a.svg: no space left on device: free some space or choose another file system\n",
		"probee: -o " + small + "/d/: write " + small + "/d/",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	b, err := os.ReadFile(other + "/b.folded")
	if err != nil || !strings.Contains(string(b), "main;a;b;c;leaf 1") {
		t.Errorf("%s/b.folded: %v %q", other, err, b)
	}
	if _, err := os.Stat(other + "/p.pb.gz"); err != nil {
		t.Error(err)
	}
	if m, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(m), small) {
		t.Errorf("%s still mounted", small)
	}
}

// Collapsed stacks to a full stdout: exit 1, the error on stderr.
func TestOutputStdoutFull(t *testing.T) {
	testgate.Root(t)
	chain := fixture(t, "chain-fp")
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer full.Close()
	cmd := exec.Command(probee, "--uprobe", chain+":leaf", "--", chain, "1")
	isolateMounts(cmd)
	var errb strings.Builder
	cmd.Stdout, cmd.Stderr = full, &errb
	err = cmd.Run()
	t.Logf("stderr:\n%s", errb.String())
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(errb.String(), "no space left on device") {
		t.Errorf("%v; want exit 1 and no space left on device", err)
	}
}

// Without -o the stacks go to stdout; when that is not a terminal (here a
// pipe, as to flamegraph.pl), the command's own output goes to stderr, so
// every line on stdout is a stack.
func TestCommandStdoutApart(t *testing.T) {
	testgate.Root(t)
	r := run(t, "", "--uprobe", "libc:malloc", "--", "ls", "/")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	for _, l := range lines {
		if !foldedLine.MatchString(l) {
			t.Errorf("stdout line %q is no stack", l)
		}
	}
	if r.code != 0 || len(lines) < 2 || !regexp.MustCompile(`(?m)^etc$`).MatchString(r.stderr) {
		t.Errorf("exit %d, %d lines on stdout, ls's output on stderr: %v", r.code, len(lines), strings.Contains(r.stderr, "etc"))
	}
}

var foldedLine = regexp.MustCompile(`^\S.* \d+$`)
