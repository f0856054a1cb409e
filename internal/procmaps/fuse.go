package procmaps

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrUntrustedFUSE is wrapped by File's error for a file on a FUSE file
// system that a user other than root mounted for others to read
// (allow_other, which /etc/fuse.conf's user_allow_other lets users ask
// of fusermount3). Its server is that user's process. Once the server
// has taken a request (a lookup, a stat, an open, a read), the kernel
// waits for its answer without letting any signal end the wait, not even
// SIGKILL: a server that never answers leaves the reading thread stuck
// for good, and a process with such a thread never exits. probee's time
// budget per file (internal/fileid.Bounded) lets a run finish, but not
// exit. So such a file is not touched at all: its frames are named by
// module and offset, its stacks walked with frame pointers. A FUSE file
// system root mounted is root's own and is read; one mounted without
// allow_other (or in a user namespace) refuses root anyway (EACCES).
var ErrUntrustedFUSE = errors.New("on a FUSE file system another user serves: not read (its server could hang any reader for good)")

// fuseOwners caches, by device as the maps show it, the owner of the
// FUSE file system there (-1: not FUSE, or root's), for fuseTTL: a
// device number is reused once its file system is unmounted.
var fuseOwners = struct {
	sync.Mutex
	by map[string]fuseOwner
}{by: map[string]fuseOwner{}}

type fuseOwner struct {
	uid int
	at  time.Time
}

const fuseTTL = 5 * time.Second

// untrustedFUSE returns an error wrapping ErrUntrustedFUSE when m's file
// lies on a FUSE file system a user other than root serves, as pid's
// mount table (under root) shows it, else probee's own. Only devices of
// major 0 (FUSE's, and tmpfs', overlayfs', ...) are looked up; nothing
// here touches the file system itself.
func untrustedFUSE(root string, pid int, m Mapping) error {
	if !strings.HasPrefix(m.Dev, "00:") {
		return nil
	}
	uid := fuseOwnerOf(root, pid, m.Dev)
	if uid <= 0 {
		return nil
	}
	return fmt.Errorf("%s (device %s, mounted by uid %d): %w", m.Path, m.Dev, uid, ErrUntrustedFUSE)
}

func fuseOwnerOf(root string, pid int, dev string) int {
	now := time.Now()
	fuseOwners.Lock()
	o, ok := fuseOwners.by[dev]
	fuseOwners.Unlock()
	if ok && now.Sub(o.at) < fuseTTL {
		return o.uid
	}
	uid := -1
	for _, p := range []string{fmt.Sprintf("/proc/%d/mountinfo", pid), "/proc/self/mountinfo"} {
		b, err := readBounded(under(root, p))
		if err != nil {
			continue
		}
		if u, found := fuseOwnerIn(b, dev); found {
			uid = u
			break
		}
	}
	fuseOwners.Lock()
	if len(fuseOwners.by) > 4096 {
		clear(fuseOwners.by)
	}
	fuseOwners.by[dev] = fuseOwner{uid, now}
	fuseOwners.Unlock()
	return uid
}

// fuseOwnerIn finds the mount of dev in a mountinfo text: found reports
// whether it is there; uid is the user_id of a FUSE file system (-1 for
// any other kind).
func fuseOwnerIn(mountinfo []byte, dev string) (uid int, found bool) {
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		f := strings.Fields(sc.Text())
		if len(f) < 3 || mountDev(f[2]) != dev {
			continue
		}
		sep := slices.Index(f, "-")
		if sep < 0 || sep+3 >= len(f) {
			return -1, true
		}
		fstype := f[sep+1]
		if fstype != "fuse" && fstype != "fuseblk" && !strings.HasPrefix(fstype, "fuse.") {
			return -1, true
		}
		return superUserID(f[sep+3]), true
	}
	return -1, false
}

// mountDev is mountinfo's decimal major:minor as the maps print a device.
func mountDev(s string) string {
	maj, min, ok := strings.Cut(s, ":")
	a, err1 := strconv.ParseUint(maj, 10, 32)
	b, err2 := strconv.ParseUint(min, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return ""
	}
	return DevName(uint32(a), uint32(b))
}

// superUserID is the user_id= of FUSE super options; one without it (or
// unreadable) is taken as another user's.
func superUserID(opts string) int {
	for _, o := range strings.Split(opts, ",") {
		if v, ok := strings.CutPrefix(o, "user_id="); ok {
			if uid, err := strconv.Atoi(v); err == nil && uid >= 0 {
				return uid
			}
		}
	}
	return 1<<31 - 1
}
