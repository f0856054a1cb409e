package output

import (
	"bytes"
	"testing"

	"github.com/probee/probee/internal/container"
)

const ctrID = "4f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0"

// containerProfile has one stack of one program in a container, in a
// service's cgroup, and in an unknown place (--group-by container off).
func containerProfile() *Profile {
	stack := StackOf(&Frame{Name: "main"}, &Frame{Name: "f"})
	return &Profile{Measure: Measure{Kind: KindHits}, Probes: []string{"p"}, Samples: []Sample{
		{Probe: "p", PID: 1, Comm: "app", User: stack, Count: 1,
			Container: container.Info{ID: ctrID, Cgroup: "/system.slice/docker-" + ctrID + ".scope"}},
		{Probe: "p", PID: 2, Comm: "app", User: stack, Count: 2, Container: container.Info{Cgroup: "/system.slice/x;y.service"}},
		{Probe: "p", PID: 3, Comm: "app", User: stack, Count: 4},
	}}
}

// --group-by container: a root frame above comm in collapsed stacks
// (sanitized), none where nothing is known.
func TestContainerFrames(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCollapsed(&buf, containerProfile(), Options{WithProbe: true}); err != nil {
		t.Fatal(err)
	}
	want := "p;[cgroup /system.slice/x,y.service];app;main;f 2\np;[container 4f1e2d3c4b5a];app;main;f 1\np;app;main;f 4\n"
	if buf.String() != want {
		t.Errorf("got\n%swant\n%s", buf.String(), want)
	}
}

// ... and pprof labels container (the full id) and cgroup, samples of
// different containers kept apart.
func TestContainerLabels(t *testing.T) {
	prof := writePprof(t, containerProfile())
	got := map[int64][2]string{}
	for _, s := range prof.Sample {
		got[s.NumLabel["pid"][0]] = [2]string{first(s.Label["container"]), first(s.Label["cgroup"])}
	}
	want := map[int64][2]string{
		1: {ctrID, "/system.slice/docker-" + ctrID + ".scope"},
		2: {"", "/system.slice/x;y.service"},
		3: {"", ""},
	}
	for pid, w := range want {
		if got[pid] != w {
			t.Errorf("pid %d: labels container, cgroup = %q, want %q", pid, got[pid], w)
		}
	}
	if len(prof.Sample) != 3 {
		t.Errorf("%d samples, want 3", len(prof.Sample))
	}
}
