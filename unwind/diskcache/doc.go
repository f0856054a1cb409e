// Package diskcache keeps unwind tables on disk between runs, so that a
// second probee run on the same binaries loads their tables instead of
// building them (libLLVM-14's: 860,973 CFI rows). Dir implements
// unwind.Store; unwind.Cache decides when to load and save, this package
// owns where and how: the directory, the file format, its integrity
// checks, atomic writes and the size bound.
//
// # Where
//
// One directory, $XDG_CACHE_HOME/probee/unwind, else
// ~/.cache/probee/unwind (as root: /root/.cache/probee/unwind), created
// with mode 0700. probee's --table-cache-dir gives another;
// --no-table-cache uses none. One file per table, KEY.unwind, KEY being
// internal/fileid's key of the binary: its build-id ("b-" and hex), else
// its device, inode, size and mtime ("f-..."), so a rebuilt binary never
// meets its old table. As with the in-memory cache, two files of one
// build-id share a table (a stripped copy and its original: strip keeps
// .eh_frame but removes .debug_frame, so whichever was seen first wins).
//
// # Format (little endian)
//
//	0   [8]u8  magic "PROBEETC"
//	8   u32    FileVersion, this layout's version (1)
//	12  u32    unwind.FormatVersion, the table encoding's (the BPF layout)
//	16  u32    unwind.BuilderVersion, how tables are built from CFI
//	20  u32    K, then K bytes: the key (checked against the file's name)
//	    u32    N, then N PT_LOAD segments of 36 bytes: vaddr, offset,
//	           filesz, memsz (u64), flags (u32)
//	    8 x u64 unwind.Stats: FDEs, Rows, PLTRows, SignalRows, EndRows,
//	           Unsupported, BadFDEs, Overlaps
//	    u32    E, then E bytes: Stats.FirstError
//	    u64    T, then T bytes: the table as unwind.Table.MarshalBinary
//	           encodes it (header, page index, entries, rules)
//	    u32    CRC-32C (Castagnoli) of every byte before it
//
// # Never trusted
//
// A file of another FileVersion, FormatVersion or BuilderVersion is stale:
// ignored (a debug line), its table built again and the file overwritten;
// bumping any of the three retires every file written before. A file whose
// checksum, key or sizes do not match, or whose table breaks the layout
// the BPF search relies on (unwind.Table.UnmarshalBinary checks it as
// MarshalBinary does), is corrupt: a warning names it, the table is built
// again and the file rewritten. The decoder never panics on any input
// (FuzzDecode). Files are read mapped (MAP_POPULATE: no copy of the file
// on the heap, one system call to fault it in); a fault because the file
// shrank meanwhile becomes an error (debug.SetPanicOnFault).
//
// # Writes
//
// A table built is written in the background (Wait waits at exit): to a
// temporary file in the directory (KEY.unwind.tmp-RANDOM, mode 0600), then
// renamed over KEY.unwind, so a reader, in this or another probee, sees
// the old file or the new one, never a part. Files are not synced: a crash
// can leave a damaged file, which the checksum catches. A write that fails
// (read-only or full disk) is reported once; tracing goes on.
//
// # Size bound
//
// After a write, the files together are kept under a bound (Options.
// MaxBytes, probee's --table-cache-size, default DefaultMaxBytes = 256 MiB)
// when the bytes known to be there (the last scan's, plus this process's
// writes since) pass it, or the last scan is a minute old (other probees
// write there too): the least recently used go first, use being the file's mtime, which
// Load refreshes. Temporary files older than an hour (a probee killed while
// writing) are removed too; other files in the directory are left alone.
package diskcache
