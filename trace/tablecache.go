package trace

import (
	"github.com/probee/probee/bpf"
	"github.com/probee/probee/unwind"
	"github.com/probee/probee/unwind/diskcache"
)

// openTables returns the cache that builds the run's unwind tables: with
// the on-disk table cache (unwind/diskcache) in --table-cache-dir or its
// default place, unless --no-table-cache. A directory that cannot be
// opened is warned about, and tables are built as without the cache. The
// tables held stay within --unwind-budget.
func (t *tracer) openTables() {
	defer func() { t.tables.SetBudget(bpf.TableBudget(uint64(t.cfg.UnwindBudget))) }()
	t.tables = unwind.NewCache()
	if t.cfg.NoTableCache {
		return
	}
	dir := t.cfg.TableCacheDir
	if dir == "" {
		var err error
		if dir, err = diskcache.DefaultDir(); err != nil {
			t.status.Warnf("%v", err)
			return
		}
	}
	d, err := diskcache.Open(dir, diskcache.Options{MaxBytes: int64(t.cfg.TableCacheSize),
		Warnf: t.status.Warnf, Debugf: t.status.Debugf})
	if err != nil {
		t.status.Warnf("%v: tables are built on every run (--no-table-cache silences this)", err)
		return
	}
	t.tableDir, t.tables = d, unwind.NewCacheWithStore(d)
}

// closeTables waits for the tables being written to the table cache.
func (t *tracer) closeTables() {
	if t.tableDir != nil {
		t.tableDir.Wait()
	}
}

// reportTableSources says how many tables were built and how many came
// from the table cache.
func (t *tracer) reportTableSources() {
	s := t.tables.Stats()
	if t.tableDir == nil {
		t.status.Infof("unwind tables built: %d in %s (table cache off)", s.Built, millis(s.BuildTime))
		return
	}
	t.status.Infof("unwind tables built: %d in %s; loaded from the table cache: %d in %s (%s)",
		s.Built, millis(s.BuildTime), s.Loaded, millis(s.LoadTime), t.tableDir.Path())
}
