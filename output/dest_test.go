package output

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestPlan(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.folded")
	os.WriteFile(file, nil, 0o644)
	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o555)
	victim := filepath.Join(dir, "victim")
	os.Mkdir(victim, 0o755)
	for link, target := range map[string]string{"y.svg": victim, "d": victim, "f.svg": file, "gone.svg": "nowhere"} {
		os.Symlink(target, filepath.Join(dir, link))
	}
	syscall.Mkfifo(filepath.Join(dir, "fifo.svg"), 0o644)
	tests := []struct {
		dests []string
		want  string // substring of the error, "" for none
	}{
		{[]string{filepath.Join(dir, "a.folded"), filepath.Join(dir, "a.SVG"), filepath.Join(dir, "a.pb.gz")}, ""},
		{[]string{filepath.Join(dir, "a.collapsed"), dir, filepath.Join(dir, "new", "deeper") + "/"}, ""},
		{[]string{file, victim, victim + "/sub.svg/"}, ""},
		{[]string{"out.txt"}, `-o out.txt: unknown output extension ".txt": use .folded, .collapsed, .svg, .pb.gz or a directory ending in /`},
		{[]string{"out"}, "-o out: no output extension: use .folded"},
		{[]string{"x.gz"}, `unknown output extension ".gz"`},
		{[]string{""}, "-o: empty path"},
		{[]string{filepath.Join(dir, "nodir", "a.svg")}, "does not exist: create it first"},
		{[]string{filepath.Join(file, "a.svg")}, file + " is not a directory"},
		{[]string{filepath.Join(file, "sub") + "/"}, file + " is not a directory"},
		{[]string{filepath.Join(file, "sub", "deeper") + "/"}, file + " is not a directory"},
		{[]string{file + "/"}, file + " is not a directory"},
		{[]string{filepath.Join(dir, "a.svg"), filepath.Join(dir, ".", "a.svg")}, "same destination"},
		{[]string{filepath.Join(dir, "y.svg")}, "-o " + dir + "/y.svg: is a symbolic link to the directory " + victim + ": probee does not write through links"},
		{[]string{filepath.Join(dir, "d") + "/"}, "is a symbolic link to the directory " + victim},
		{[]string{filepath.Join(dir, "d")}, "is a symbolic link to the directory " + victim},
		{[]string{filepath.Join(dir, "f.svg")}, "is a symbolic link to " + file + ": probee does not write through links"},
		{[]string{filepath.Join(dir, "gone.svg")}, "is a symbolic link to nowhere"},
		{[]string{filepath.Join(dir, "fifo.svg")}, "exists and is not a regular file"},
	}
	if os.Geteuid() != 0 { // root writes anywhere
		tests = append(tests, struct {
			dests []string
			want  string
		}{[]string{filepath.Join(ro, "a.svg")}, "choose a writable directory"})
	}
	for _, tt := range tests {
		ds, err := Plan(tt.dests)
		ds.Close()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Plan(%q): %v", tt.dests, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Plan(%q) = %v, want an error containing %q", tt.dests, err, tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		t.Error("Plan created a directory")
	}
	if left, _ := os.ReadDir(victim); len(left) != 0 {
		t.Errorf("Plan wrote into %s: %v", victim, left)
	}
	assertNoTemp(t, dir)
}

func TestPlanReadOnlyFS(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("no /proc")
	}
	_, err := Plan([]string{"/proc/self/x.svg"})
	if err == nil || !strings.Contains(err.Error(), "-o /proc/self/x.svg: cannot write in /proc/self") {
		t.Errorf("Plan on /proc: %v, want cannot write", err)
	}
}

// Plan fixes each destination's kind and directory: links planted in its
// path during the run are not followed (the file replaces a link at its
// name; a directory renamed away and replaced by a link is still written
// where it was).
func TestPlanKeepsKind(t *testing.T) {
	dir := t.TempDir()
	victim, base := filepath.Join(dir, "victim"), filepath.Join(dir, "base")
	for _, d := range []string{victim, base, filepath.Join(base, "out")} {
		os.Mkdir(d, 0o755)
	}
	os.WriteFile(filepath.Join(victim, "index.html"), []byte("victim's"), 0o644)
	y, out, fresh := filepath.Join(dir, "y.svg"), filepath.Join(base, "out"), filepath.Join(base, "new")+"/"
	ds := plan(t, y, out, fresh)
	os.Symlink(victim, y) // planted during the run
	os.Rename(base, filepath.Join(dir, "moved"))
	os.Symlink(victim, base)
	if err := Write(smallProfile(), ds, Options{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(y); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("%s: %v, want the flamegraph in its place", y, fi.Mode())
	}
	checkSVG(t, read(t, y))
	if b := read(t, filepath.Join(victim, "index.html")); string(b) != "victim's" {
		t.Errorf("wrote through a link planted during the run: %s/index.html is %.40q", victim, b)
	}
	for _, d := range []string{"out", "new"} {
		read(t, filepath.Join(dir, "moved", d, "index.html"))
	}
	if left, _ := os.ReadDir(victim); len(left) != 1 {
		t.Errorf("wrote into %s: %v", victim, left)
	}
}

// A directory probee was to create that another user made meanwhile is
// not written into.
func TestPlanDirMadeByOther(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a directory owned by another user")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out") + "/"
	ds := plan(t, out)
	os.Mkdir(out, 0o777)
	os.Chown(out, 65534, 65534)
	err := Write(smallProfile(), ds, Options{})
	if err == nil || !strings.Contains(err.Error(), "was made by uid 65534 while probee ran") {
		t.Errorf("Write into a directory another user made: %v", err)
	}
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("wrote into it: %v", left)
	}
}

// A link another user made in a sticky world-writable directory is not
// followed on the way to a destination (fs.protected_symlinks' rule).
func TestPlanPlantedParent(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a link owned by another user")
	}
	dir := t.TempDir()
	shared, victim := filepath.Join(dir, "tmp"), filepath.Join(dir, "victim")
	os.Mkdir(shared, 0o777)
	os.Chmod(shared, os.ModeSticky|0o777)
	os.Mkdir(victim, 0o755)
	sub, mine := filepath.Join(shared, "sub"), filepath.Join(shared, "mine")
	os.Symlink(victim, sub)
	os.Lchown(sub, 65534, 65534)
	os.Symlink(victim, mine)
	for _, tc := range []struct{ dest, want string }{
		{filepath.Join(sub, "y.svg"), sub + " is a symbolic link that uid 65534 made in the shared directory " + shared},
		{filepath.Join(sub, "a", "b") + "/", sub + " is a symbolic link that uid 65534 made"},
		{filepath.Join(mine, "y.svg"), ""}, // root's own link
	} {
		ds, err := Plan([]string{tc.dest})
		ds.Close()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Plan(%s): %v, want %q", tc.dest, err, tc.want)
		}
	}
}

// An existing destination directory that another user owns, or that any
// user may write in without the sticky bit, is refused: they could swap
// probee's files there (issue 44, requirement 5). A file goes into the
// directory named with it, and a new directory is probee's own.
func TestPlanExistingDirOwner(t *testing.T) {
	const nobody, mine = 65534, -1
	tests := []struct {
		name  string
		owner int         // uid, or mine (the effective uid)
		mode  os.FileMode // of the existing directory
		dest  string      // under it: "" for the directory itself
		want  string      // substring of the error, "" for none
	}{
		{"nobody's", nobody, 0o777, "", "the directory DIR is owned by uid 65534 (nobody), not by root or by probee's user: " +
			"its owner could swap probee's files there; choose another path or remove it"},
		{"nobody's private", nobody, 0o755, "", "is owned by uid 65534"},
		{"nobody's sticky", nobody, os.ModeSticky | 0o777, "", "is owned by uid 65534"},
		{"nobody's, a file in it", nobody, 0o777, "y.svg", ""},
		{"nobody's, a new directory in it", nobody, 0o777, "new/", ""},
		{"world-writable", mine, 0o777, "", "the directory DIR is world-writable without the sticky bit (mode 0777): " +
			"any user could swap probee's files there; choose another path or remove it"},
		{"group and world-writable", mine, 0o773, "", "without the sticky bit (mode 0773)"},
		{"world-writable and sticky", mine, os.ModeSticky | 0o777, "", ""},
		{"mine", mine, 0o755, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.owner != mine && os.Geteuid() != 0 {
				t.Skip("needs root to give a directory to uid 65534")
			}
			dir := filepath.Join(t.TempDir(), "out")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tt.mode); err != nil {
				t.Fatal(err)
			}
			if tt.owner != mine {
				if err := os.Chown(dir, tt.owner, tt.owner); err != nil {
					t.Fatal(err)
				}
			}
			arg := dir + "/" + tt.dest
			ds, err := Plan([]string{arg})
			ds.Close()
			want := strings.ReplaceAll(tt.want, "DIR", dir)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
				t.Errorf("Plan(%s): %v, want %q", arg, err, want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "-o "+arg+": ") {
				t.Errorf("error %q does not start with the -o argument", err)
			}
		})
	}
}
