package procmaps

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A mapping on a FUSE file system another user mounted is refused before
// any path is touched (ErrUntrustedFUSE); root's FUSE, other kinds of
// file system with major 0, and devices the mount table lacks are not.
// The process's own mount table is read, else probee's.
func TestUntrustedFUSE(t *testing.T) {
	const mountinfo = `22 1 0:21 / /proc rw,nosuid - proc proc rw
25 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw
60 25 0:51 / /tmp/evil rw,nosuid,nodev,relatime shared:30 - fuse.sshfs evil rw,user_id=65534,group_id=65534,allow_other
61 25 0:52 / /mnt/root-fuse rw,relatime - fuse rootfs rw,user_id=0,group_id=0,allow_other
62 25 0:53 / /run/user rw - tmpfs tmpfs rw,size=10k
63 25 0:54 / /tmp/odd rw - fuseblk odd rw,group_id=0
`
	root := t.TempDir()
	dir := filepath.Join(root, "proc", "42")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mountinfo"), []byte(mountinfo), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dev  string
		want bool
	}{
		{"00:33", true},  // 0:51, fuse.sshfs of uid 65534
		{"00:34", false}, // 0:52, root's FUSE
		{"00:35", false}, // 0:53, tmpfs
		{"00:36", true},  // 0:54, fuseblk without user_id
		{"fe:01", false}, // not major 0: not looked up
		{"00:99", false}, // in no mount table
	} {
		m := Mapping{Start: 0x1000, End: 0x2000, Perms: "r-xp", Dev: c.dev, Inode: 7, Path: "/tmp/evil/x.so"}
		_, err := File(root, 42, m)
		if got := errors.Is(err, ErrUntrustedFUSE); got != c.want {
			t.Errorf("device %s: %v, want refused %v", c.dev, err, c.want)
		}
	}
}
