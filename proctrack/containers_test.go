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
