package proctrack

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/probee/probee/internal/container"
)

const ctrID = "4f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0"

// With Containers, a process's container is read when it is first seen,
// again after it execs (a runtime moves it into the container's cgroup
// first), kept once it exits; a child gone before its notice is in its
// parent's. Without, nothing is read.
func TestContainers(t *testing.T) {
	r := newRig(t, func(c *Config, _ *fakeKernel) { c.Containers = true })
	cgroup := func(pid int, path string) {
		r.proc.write(filepath.Join(r.proc.pidDir(pid), "cgroup"), []byte("0::"+path+"\n"))
	}
	r.proc.process(10, r.proc.root)
	cgroup(10, "/user.slice/session-1.scope")
	r.tr.OnProcessEvent(newProcess(10, 0))
	r.tr.OnProcessEvent(newProcess(11, 10)) // gone already
	cgroup(10, "/system.slice/docker-"+ctrID+".scope")
	want := container.Info{Cgroup: "/user.slice/session-1.scope"}
	if got := r.tr.ctrs.of[10]; got != want {
		t.Errorf("before the exec: %+v, want %+v", got, want)
	}
	if got := r.tr.Container(11); got != want {
		t.Errorf("child gone at its notice: %+v, want its parent's %+v", got, want)
	}
	r.tr.OnMmap(execed(10))
	r.tr.Container(10)
	cgroup(10, "/") // what a zombie's file says
	r.proc.write(filepath.Join(r.proc.pidDir(10), "stat"), []byte("10 (a b) Z 1"+strings.Repeat(" 0", 18)+"\n"))
	r.tr.Container(10)
	r.proc.exit(10)
	want = container.Info{ID: ctrID, Cgroup: "/system.slice/docker-" + ctrID + ".scope"}
	if got := r.tr.Container(10); got != want {
		t.Errorf("after the exec, exited: %+v, want %+v", got, want)
	}

	off := newRig(t, nil)
	off.proc.process(10, off.proc.root)
	off.tr.OnProcessEvent(newProcess(10, 0))
	if got := off.tr.Container(10); got != (container.Info{}) || off.tr.ctrs != nil {
		t.Errorf("without Containers: %+v, want nothing", got)
	}
}

// fakePS is a process of TestContainerOfKin's /proc: state 0 is gone
// (no /proc/PID), 'R' is a /proc/PID/cgroup left by one reaped after that
// file was read (no stat).
type fakePS struct {
	pid, ppid int
	state     byte
	cgroup    string
}

// A process that no longer runs when its notice is handled (a
// short-lived child gone, a zombie whose cgroup file says "/") is in the
// container of the nearest of its parent and ancestors that runs, read
// then, or of one that ran when it was seen; never in a zombie's "/".
// Before, it took what was recorded of its parent alone: nothing for a
// parent that never hit a probe (a container's shell running ctrapp 3
// 200 times gave 216 of 600 hits no container frame).
func TestContainerOfKin(t *testing.T) {
	const ctr, host = "/machine.slice/libpod-" + ctrID + ".scope", "/user.slice/session-1.scope"
	inCtr := container.Info{ID: ctrID, Cgroup: ctr}
	for _, tt := range []struct {
		name    string
		earlier []fakePS // seen while they ran, gone since
		now     []fakePS // /proc when child 30 of 20 is seen
		want    container.Info
	}{
		{"running", nil, []fakePS{{30, 20, 'S', ctr}, {20, 10, 'S', host}}, inCtr},
		{"gone, parent runs", nil, []fakePS{{20, 10, 'S', ctr}}, inCtr},
		{"zombie, parent runs", nil, []fakePS{{30, 20, 'Z', "/"}, {20, 10, 'S', ctr}}, inCtr},
		{"reaped between reads", nil, []fakePS{{30, 20, 'R', "/"}, {20, 10, 'S', ctr}}, inCtr},
		{"gone, parent a zombie, grandparent runs", nil, []fakePS{{20, 10, 'Z', "/"}, {10, 1, 'S', ctr}}, inCtr},
		{"gone, parent gone, seen", []fakePS{{20, 10, 'S', ctr}}, []fakePS{{10, 1, 'S', host}}, inCtr},
		{"gone, parent a zombie, seen", []fakePS{{20, 10, 'S', ctr}}, []fakePS{{20, 10, 'Z', "/"}, {10, 1, 'S', host}}, inCtr},
		{"gone, kin gone", nil, nil, container.Info{}},
		{"zombie, kin zombies", nil, []fakePS{{30, 20, 'Z', "/"}, {20, 10, 'Z', "/"}, {10, 1, 'Z', "/"}}, container.Info{}},
		{"gone, host parent", nil, []fakePS{{20, 1, 'S', host}}, container.Info{Cgroup: host}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, func(c *Config, _ *fakeKernel) { c.Containers = true })
			for _, p := range tt.earlier {
				r.proc.fakePS(p)
				r.tr.OnProcessEvent(newProcess(p.pid, p.ppid))
				r.proc.exit(p.pid)
			}
			for _, p := range tt.now {
				r.proc.fakePS(p)
			}
			r.tr.OnProcessEvent(newProcess(30, 20))
			if got := r.tr.Container(30); got != tt.want {
				t.Errorf("container of 30: %+v, want %+v", got, tt.want)
			}
		})
	}
}

// fakePS writes p's /proc/PID/cgroup and stat.
func (f *fakeProc) fakePS(p fakePS) {
	f.t.Helper()
	if p.state == 0 {
		return
	}
	f.write(filepath.Join(f.pidDir(p.pid), "cgroup"), []byte("0::"+p.cgroup+"\n"))
	if p.state != 'R' {
		f.stat(p.pid, p.state, p.ppid)
	}
}
