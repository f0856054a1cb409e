package proctrack

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/probee/probee/bpf/wire"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/unwind"
)

// The fake kernel side and the fake /proc the tests
// drive a Tracker with. The fakes log their calls as lines
// ("SetProcessModules 10 /usr/bin/app"), so a test states what it expects
// as the list of calls.

// callLog is the calls a fake received.
type callLog struct {
	mu  sync.Mutex
	log []string
}

func (l *callLog) record(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.log = append(l.log, fmt.Sprintf(format, args...))
}

// calls returns the calls logged since the last calls.
func (l *callLog) calls() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	log := l.log
	l.log = nil
	return log
}

// fakeKernel records the calls of the kernel side.
type fakeKernel struct {
	callLog
	byFile  bool  // FindsTablesByFile
	setErr  error // returned by SetProcessModules
	contErr error // returned by Continue
	// fileErrs are returned by SetFileModules in turn, then nil.
	fileErrs []error
}

func (k *fakeKernel) AddPID(pid int) error    { k.record("AddPID %d", pid); return nil }
func (k *fakeKernel) RemovePID(pid int) error { k.record("RemovePID %d", pid); return nil }

func (k *fakeKernel) SetProcessModules(pid int, mods []unwind.Module) error {
	k.record("SetProcessModules %d %s", pid, modNames(mods))
	return k.setErr
}

func (k *fakeKernel) SetFileModules(mods []unwind.Module) error {
	k.record("SetFileModules %s", modNames(mods))
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.fileErrs) == 0 {
		return nil
	}
	err := k.fileErrs[0]
	k.fileErrs = k.fileErrs[1:]
	return err
}

func (k *fakeKernel) FindsTablesByFile() bool { return k.byFile }

func (k *fakeKernel) ForgetFiles(files []procmaps.FileKey) error {
	k.record("ForgetFiles %s", fileNames(files))
	return nil
}

// fileNames names files by device and inode, sorted, as "[fd:01/12 fd:01/13]".
func fileNames(files []procmaps.FileKey) string {
	var names []string
	for _, f := range files {
		names = append(names, fmt.Sprintf("%s/%d", f.Dev, f.Ino))
	}
	slices.Sort(names)
	return "[" + strings.Join(names, " ") + "]"
}

func (k *fakeKernel) AttachLdsoGate(path string, stateOff, stateAddr, rdebugAddr uint64) error {
	k.record("AttachLdsoGate %s", path)
	return nil
}

func (k *fakeKernel) AttachRootGate() error { k.record("AttachRootGate"); return nil }

func (k *fakeKernel) Continue(ev wire.ProcessEvent) error {
	k.record("Continue %d", ev.TGID)
	return k.contErr
}

func (k *fakeKernel) AddStack(d wire.DeferredStack, user []uint64, truncated bool) {
	k.record("AddStack %d %#x cut=%v", d.TGID, user, truncated)
}

// modNames names modules by path, "(fp)" marking an empty table (frame
// pointers only).
func modNames(mods []unwind.Module) string {
	var names []string
	for _, m := range mods {
		name := m.Path
		if m.Table == nil || len(m.Table.Entries) == 0 {
			name += "(fp)"
		}
		if m.Go != nil {
			name += "(go)" // walked on from runtime.morestack
		}
		names = append(names, name)
	}
	return "[" + strings.Join(names, " ") + "]"
}

// mapNames lists the paths of maps, as "[a b]".
func mapNames(maps []procmaps.Mapping) string {
	var names []string
	for _, m := range maps {
		names = append(names, m.Path)
	}
	return "[" + strings.Join(names, " ") + "]"
}

// manualClock holds the reloads the tracker schedules until fire.
type manualClock struct {
	mu      sync.Mutex
	pending []func()
}

func (c *manualClock) after(d time.Duration, f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, f)
}

// fire runs the scheduled reloads and returns how many there were.
func (c *manualClock) fire() int {
	c.mu.Lock()
	fs := c.pending
	c.pending = nil
	c.mu.Unlock()
	for _, f := range fs {
		f()
	}
	return len(fs)
}

// fakeProc is a /proc and a file system in a temporary directory.
type fakeProc struct {
	t    *testing.T
	root string
}

// elfImage is a small dynamically linked x86-64 ELF file with CFI, copied
// into the fake trees (coreutils' true: its executable segment is at file
// offset 0x2000).
var elfImage = sync.OnceValues(func() ([]byte, error) { return os.ReadFile("/usr/bin/true") })

const elfExecOffset = 0x2000

// file writes the ELF image at name under dir (the fake root or a
// container's) and returns its executable mapping at start.
func (f *fakeProc) file(dir, name string, start uint64) procmaps.Mapping {
	f.t.Helper()
	img, err := elfImage()
	if err != nil {
		f.t.Skipf("no ELF image to map: %v", err)
	}
	path := filepath.Join(dir, name)
	f.write(path, img)
	return f.mappingOf(path, name, start)
}

// mappingOf is the executable mapping of the file at path, named name.
func (f *fakeProc) mappingOf(path, name string, start uint64) procmaps.Mapping {
	f.t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		f.t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return procmaps.Mapping{Start: start, End: start + 0x4000, Perms: "r-xp", Offset: elfExecOffset,
		Dev: procmaps.StatDev(st.Dev), Inode: st.Ino, Path: name}
}

// heap is a mapping that is not code.
func heap(start uint64) procmaps.Mapping {
	return procmaps.Mapping{Start: start, End: start + 0x1000, Perms: "rw-p", Dev: "00:00", Path: "[heap]"}
}

func (f *fakeProc) write(path string, data []byte) {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o755); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeProc) symlink(target, link string) {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		f.t.Fatal(err)
	}
	os.Remove(link)
	if err := os.Symlink(target, link); err != nil {
		f.t.Fatal(err)
	}
}

// process creates /proc/PID with its root directory (f.root: probee's own)
// and its mappings.
func (f *fakeProc) process(pid int, root string, maps ...procmaps.Mapping) {
	f.t.Helper()
	f.symlink(root, filepath.Join(f.pidDir(pid), "root"))
	f.setMaps(pid, maps...)
	f.stat(pid, 'S', 1)
}

// stat writes /proc/PID/stat: pid in state (S runs, Z is a zombie), child
// of ppid.
func (f *fakeProc) stat(pid int, state byte, ppid int) {
	f.t.Helper()
	line := fmt.Sprintf("%d (a b) %c %d%s\n", pid, state, ppid, strings.Repeat(" 0", 18))
	f.write(filepath.Join(f.pidDir(pid), "stat"), []byte(line))
}

// setMaps rewrites /proc/PID/maps.
func (f *fakeProc) setMaps(pid int, maps ...procmaps.Mapping) {
	f.t.Helper()
	var b strings.Builder
	for _, m := range maps {
		fmt.Fprintf(&b, "%x-%x %s %08x %s %d %s\n", m.Start, m.End, m.Perms, m.Offset, m.Dev, m.Inode, m.Path)
	}
	f.write(filepath.Join(f.pidDir(pid), "maps"), []byte(b.String()))
}

// exit removes /proc/PID.
func (f *fakeProc) exit(pid int) {
	f.t.Helper()
	if err := os.RemoveAll(f.pidDir(pid)); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeProc) pidDir(pid int) string {
	return filepath.Join(f.root, "proc", fmt.Sprint(pid))
}

// rig is a Tracker on fakes.
type rig struct {
	t     *testing.T
	proc  *fakeProc
	k     *fakeKernel
	hist  *History
	clock *manualClock
	tr    *Tracker
	start []string // kernel calls made by New
	mu    sync.Mutex
	warns []string
	debug []string
}

// newRig returns a Tracker with tables on a fake kernel and /proc; edit
// changes the Config and the fake kernel first.
func newRig(t *testing.T, edit func(*Config, *fakeKernel)) *rig {
	r := &rig{t: t, proc: &fakeProc{t, t.TempDir()}, k: &fakeKernel{}, clock: &manualClock{}}
	r.hist = newTestHistory(r.proc.root)
	cfg := Config{Kernel: r.k, History: r.hist, Tables: true, Root: r.proc.root,
		Warnf: r.logTo(&r.warns), Debugf: r.logTo(&r.debug)}
	if edit != nil {
		edit(&cfg, r.k)
	}
	r.tr = New(cfg)
	r.start = r.k.calls() // the vDSO's table (TestFileTablesWhen); tests check the calls after
	if r.tr.tables != nil {
		r.tr.tables.after = r.clock.after
	}
	t.Cleanup(r.tr.Stop)
	return r
}

func (r *rig) logTo(lines *[]string) func(string, ...any) {
	return func(format string, args ...any) {
		r.mu.Lock()
		defer r.mu.Unlock()
		*lines = append(*lines, fmt.Sprintf(format, args...))
	}
}

// warnings returns the warnings so far.
func (r *rig) warnings() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.warns)
}

// debugLines returns the debug lines so far.
func (r *rig) debugLines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.debug)
}

// wantKernel checks the kernel calls since the last check.
func (r *rig) wantKernel(want ...string) {
	r.t.Helper()
	if got := r.k.calls(); !slices.Equal(got, want) {
		r.t.Errorf("kernel calls:\n got %q\nwant %q", got, want)
	}
}

// wantMaps checks the mappings the history has of the image pid runs
// (or ran last): their paths, as mapNames lists them.
func (r *rig) wantMaps(pid int, want string) {
	r.t.Helper()
	if got := mapNames(r.hist.Mappings(pid, "", nil)); got != want {
		r.t.Errorf("pid %d's mappings in the history: %s, want %s", pid, got, want)
	}
}

// known reports whether the history knows pid.
func (r *rig) known(pid int) bool {
	r.hist.mu.Lock()
	defer r.hist.mu.Unlock()
	return r.hist.procs[pid] != nil
}

// The kernel's records.

func newProcess(pid, ppid int) wire.ProcessEvent {
	return wire.ProcessEvent{Type: wire.EventNewProcess, TGID: pid, PID: pid, PPID: ppid}
}

func gateStop(pid int) wire.ProcessEvent {
	return wire.ProcessEvent{Type: wire.EventGate, TGID: pid, PID: pid}
}

func exited(pid int) wire.ProcessEvent {
	return wire.ProcessEvent{Type: wire.EventExit, TGID: pid, PID: pid}
}

func mapped(pid int, m procmaps.Mapping) wire.MmapEvent {
	return wire.MmapEvent{PID: pid, Start: m.Start, End: m.End, Pgoff: m.Offset, Ino: m.Inode, Dev: m.Dev, Path: m.Path}
}

func execed(pid int) wire.MmapEvent { return wire.MmapEvent{PID: pid, Exec: true} }

func forked(child, parent int) wire.MmapEvent {
	return wire.MmapEvent{PID: child, Fork: true, PPID: parent}
}

// defaultInterp is the ld.so the fake ELF files ask for.
const defaultInterp = "/lib64/ld-linux-x86-64.so.2"

// ldso copies the machine's ld.so into the fake root, where the fake ELF
// files' interpreter is, and returns its path there. (A link to the
// machine's would not do: paths under /proc/PID/root resolve inside that
// root, as the process sees them.)
func (r *rig) ldso() string {
	r.t.Helper()
	data, err := os.ReadFile(defaultInterp)
	if err != nil {
		r.t.Skipf("no ld.so for the gate: %v", err)
	}
	path := r.proc.root + defaultInterp
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o755); err != nil {
		r.t.Fatal(err)
	}
	return path
}
