package container

import (
	"os"
	"strings"
	"testing"
)

const id = "4f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0"

func TestParse(t *testing.T) {
	tests := []struct {
		name, text string
		want       Info
		frame      string
	}{
		{"cgroup v2, docker (systemd driver)", "0::/system.slice/docker-" + id + ".scope\n",
			Info{ID: id, Cgroup: "/system.slice/docker-" + id + ".scope"}, "[container 4f1e2d3c4b5a]"},
		{"cgroup v2, kubernetes cri-containerd", "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c.slice/cri-containerd-" + id + ".scope\n",
			Info{ID: id, Cgroup: "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c.slice/cri-containerd-" + id + ".scope"}, "[container 4f1e2d3c4b5a]"},
		{"cgroup v2, podman: the container's own subgroup", "0::/machine.slice/libpod-" + id + ".scope/container\n",
			Info{ID: id, Cgroup: "/machine.slice/libpod-" + id + ".scope/container"}, "[container 4f1e2d3c4b5a]"},
		{"cgroup v1, docker (cgroupfs driver)", "12:memory:/docker/" + id + "\n1:name=systemd:/docker/" + id + "\n0::/\n",
			Info{ID: id, Cgroup: "/docker/" + id}, "[container 4f1e2d3c4b5a]"},
		{"a service", "0::/system.slice/nginx.service\n",
			Info{Cgroup: "/system.slice/nginx.service"}, "[cgroup /system.slice/nginx.service]"},
		{"hybrid: name=systemd before other v1 paths", "4:memory:/process_api/a4d7\n9:name=systemd:/user.slice/s.scope\n0::/\n",
			Info{Cgroup: "/user.slice/s.scope"}, "[cgroup /user.slice/s.scope]"},
		{"hybrid: only a v1 controller has a path", "9:name=systemd:/\n4:memory:/process_api/a4d7\n0::/\n",
			Info{Cgroup: "/process_api/a4d7"}, "[cgroup /process_api/a4d7]"},
		{"root cgroup", "0::/\n", Info{Cgroup: "/"}, "[cgroup /]"},
		{"a path with colons", "0::/a:b/c\n", Info{Cgroup: "/a:b/c"}, "[cgroup /a:b/c]"},
		{"empty", "", Info{}, ""},
		{"not an id: 63 digits", "0::/docker/" + id[1:] + "\n", Info{Cgroup: "/docker/" + id[1:]}, "[cgroup /docker/" + id[1:] + "]"},
		{"not an id: upper case", "0::/docker/" + strings.ToUpper(id) + "\n", Info{Cgroup: "/docker/" + strings.ToUpper(id)}, "[cgroup /docker/" + strings.ToUpper(id) + "]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Parse = %+v, want %+v", got, tt.want)
			}
			if f := got.Frame(); f != tt.frame {
				t.Errorf("Frame = %q, want %q", f, tt.frame)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{"0:/x", "::/x", "0::x", "garbage"} {
		if _, err := Parse(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("Parse(%q) = %v, want an error naming line 1", bad, err)
		}
	}
}

// The test's own process has a readable cgroup file.
func TestReadSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/cgroup"); err != nil {
		t.Skipf("no /proc/self/cgroup: %v", err)
	}
	info, err := Read("/proc/self/cgroup")
	if err != nil || info.Cgroup == "" {
		t.Errorf("Read(/proc/self/cgroup) = %+v, %v; want a cgroup path", info, err)
	}
}

// FuzzParse: no panics; an accepted input gives an id of 64 hex digits or
// none, and a cgroup path that is absolute or empty.
func FuzzParse(f *testing.F) {
	f.Add("0::/system.slice/docker-" + id + ".scope\n")
	f.Add("12:memory:/docker/" + id + "\n1:name=systemd:/\n0::/\n")
	f.Add("0::/\n")
	f.Fuzz(func(t *testing.T, s string) {
		info, err := Parse(strings.NewReader(s))
		if err != nil {
			return
		}
		if info.ID != "" && !isID(info.ID) || info.Cgroup != "" && !strings.HasPrefix(info.Cgroup, "/") {
			t.Fatalf("bad info accepted: %+v", info)
		}
		_ = info.Frame()
	})
}
