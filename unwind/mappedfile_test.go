package unwind

import "testing"

func TestMappedFile(t *testing.T) {
	m := Mapping{Start: 0x5555000, End: 0x5556000, Path: "/usr/bin/x"}
	del := m
	del.Deleted = true
	cases := []struct {
		m    Mapping
		root string
		want string
	}{
		{m, "", "/usr/bin/x"},
		{m, "/proc/42/root", "/proc/42/root/usr/bin/x"},
		{del, "/proc/42/root", "/proc/42/map_files/5555000-5556000"},
		{del, "", "/usr/bin/x"}, // no process: the path is all there is
		{del, "/srv/chroot", "/srv/chroot/usr/bin/x"},
	}
	for _, c := range cases {
		if got := mappedFile(c.m, c.root); got != c.want {
			t.Errorf("mappedFile(%+v, %q) = %q, want %q", c.m, c.root, got, c.want)
		}
	}
}
