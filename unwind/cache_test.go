package unwind

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/internal/safefile"
)

// memStore is a Store in memory that counts its calls.
type memStore struct {
	mu           sync.Mutex
	tables       map[string]*Table
	loads, saves int
}

func (s *memStore) Load(key string) (*Table, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loads++
	t, ok := s.tables[key]
	return t, ok
}

func (s *memStore) Save(key string, t *Table) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saves++
	s.tables[key] = t
}

// With a Store, a table is built once, saved under the file's key, and a
// second Cache (a second run) loads it without building; Stats say which.
func TestCacheStore(t *testing.T) {
	_, p := libcTable(t)
	id, err := fileid.OfPath(p)
	if err != nil {
		t.Fatal(err)
	}
	store := &memStore{tables: map[string]*Table{}}
	first := NewCacheWithStore(store)
	built, err := first.Get(p)
	if err != nil {
		t.Fatal(err)
	}
	if s := first.Stats(); s.Built != 1 || s.Loaded != 0 || store.saves != 1 || store.tables[id.Key()] != built {
		t.Fatalf("first run: stats %+v, %d saves, saved %v; want one build saved under %s", s, store.saves, store.tables, id.Key())
	}
	second := NewCacheWithStore(store)
	loaded, err := second.Get(p)
	if err != nil {
		t.Fatal(err)
	}
	if s := second.Stats(); s.Built != 0 || s.Loaded != 1 || store.saves != 1 || loaded != built {
		t.Errorf("second run: stats %+v, %d saves; want the saved table loaded", s, store.saves)
	}
	// A store without the table (a miss, a corrupt file): built and saved.
	delete(store.tables, id.Key())
	third := NewCacheWithStore(store)
	rebuilt, err := third.Get(p)
	if err != nil {
		t.Fatal(err)
	}
	if s := third.Stats(); s.Built != 1 || store.saves != 2 || !reflect.DeepEqual(rebuilt, built) {
		t.Errorf("after a miss: stats %+v, %d saves; want a build, saved", s, store.saves)
	}
}

// The tables held stay within the budget: past it a new file's table is
// not built (its stacks are walked by frame pointers); tables held are
// still served.
func TestCacheBudget(t *testing.T) {
	libc, libm := systemLib("libc.so.6"), systemLib("libm.so.6")
	if libc == "" || libm == "" {
		t.Skip("libc.so.6 or libm.so.6 not found")
	}
	c := NewCache()
	c.SetBudget(1)
	a, err := c.Get(libc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(libm); !errors.Is(err, safeelf.ErrBudget) || !strings.Contains(err.Error(), "--unwind-budget") {
		t.Errorf("a table past the budget: %v, want ErrBudget naming --unwind-budget", err)
	}
	if again, err := c.Get(libc); err != nil || again != a {
		t.Errorf("the table held: %p, %v", again, err)
	}
}

// A mapping's file is opened by a path the kernel printed, which names no
// link: a link there now (the file swapped for one since) is refused, not
// followed; Get, for paths probee chose, follows links.
func TestModulesFollowNoLink(t *testing.T) {
	libc := systemLib("libc.so.6")
	if libc == "" {
		t.Skip("libc.so.6 not found")
	}
	link := filepath.Join(t.TempDir(), "libc.so.6")
	if err := os.Symlink(libc, link); err != nil {
		t.Fatal(err)
	}
	m := procmaps.Mapping{Start: 0x7f0000000000, End: 0x7f0000100000, Perms: "r-xp", Path: link}
	c := NewCache()
	mods, errs := c.Modules([]procmaps.Mapping{m}, nil)
	if len(mods) != 0 || len(errs) != 1 || !errors.Is(errs[0], safefile.ErrNotRegular) {
		t.Errorf("a mapping's path that is a link: %d modules, errors %v; want ErrNotRegular", len(mods), errs)
	}
	if _, err := c.Get(link); err != nil {
		t.Errorf("Get through a link: %v", err)
	}
}

// Evict lets go of the tables of files not in use and not asked for
// lately, and gives their bytes back to the budget; a later Get builds the
// table anew, with the same Key (what the kernel side knows it by). A
// table in use, or asked for within idle, stays.
func TestCacheEvict(t *testing.T) {
	libc, libm := systemLib("libc.so.6"), systemLib("libm.so.6")
	if libc == "" || libm == "" {
		t.Skip("libc.so.6 or libm.so.6 not found")
	}
	c := NewCache()
	a, err := c.Get(libc)
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Get(libm)
	if err != nil {
		t.Fatal(err)
	}
	libcID, err := fileid.OfPath(libc)
	if err != nil {
		t.Fatal(err)
	}
	if a.Key != libcID.Key() {
		t.Errorf("Key %q, want the file's %q", a.Key, libcID.Key())
	}
	inUse := func(id fileid.ID) bool { return id == libcID }
	if n := c.Evict(inUse, time.Hour); n != 0 {
		t.Errorf("evicted %d tables asked for within the idle time", n)
	}
	if n := c.Evict(inUse, 0); n != 1 || c.Len() != 1 || c.Held() != uint64(a.Size()) {
		t.Errorf("evicted %d, %d held (%d bytes), want libm's let go, libc's (%d bytes) kept", n, c.Len(), c.Held(), a.Size())
	}
	again, err := c.Get(libm)
	if err != nil || again == m || again.Key != m.Key || c.Stats().Built != 3 {
		t.Errorf("libm after eviction: %p (was %p), key %q (was %q), %v, stats %+v; want built anew, same key", again, m, again.Key, m.Key, err, c.Stats())
	}
}
