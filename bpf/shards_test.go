package bpf

import (
	"fmt"
	"testing"

	"github.com/probee/probee/unwind"
)

// A session with tables opens with shardSpares shards; tables that fit in
// them add none, and a table past them adds every shard it needs and
// shardSpares more at once, so the next tables add none either. Each
// addition to the shard array waits for an RCU grace period: one batch
// waits once.
func TestShardsAhead(t *testing.T) {
	if st := openSession(t, Options{DWARF: true}).TableStats(); st.Shards != shardSpares {
		t.Errorf("a new session has %d shards, want %d", st.Shards, shardSpares)
	}
	if st := openSession(t, Options{}).TableStats(); st.Shards != 0 {
		t.Errorf("a session without tables has %d shards, want 0", st.Shards)
	}
	s := tableSession(t, 64<<20)
	steps := []struct {
		elems      int
		wantShards int
	}{
		{shardU32s / 2, 1 + shardSpares}, // shard 0 and the spares
		{shardU32s, 1 + shardSpares},     // into shard 1: a spare
		{6 * shardU32s, 8 + shardSpares}, // through shard 7: 8 needed, and spares
		{shardU32s / 4, 8 + shardSpares}, // in a spare
	}
	for i, st := range steps {
		mod := module(uint64(i+1)<<32, fmt.Sprintf("/lib/%d", i), bigTable(st.elems))
		if err := s.SetProcessModules(10+i, []unwind.Module{mod}); err != nil {
			t.Fatal(err)
		}
		if got := s.TableStats().Shards; got != st.wantShards {
			t.Errorf("table %d (%d elements, storage to %d): %d shards, want %d", i, st.elems, s.tables.next, got, st.wantShards)
		}
	}
	if len(s.tables.open) > shardSpares+1 {
		t.Errorf("%d shards held open, want the one being filled and the spares at most", len(s.tables.open))
	}
}
