// Package output turns a probee run into files people read and tools load:
// collapsed stacks, SVG flamegraphs, pprof profiles, and the per-probe file
// layout behind the -o flag. It owns no capture logic and never talks to
// BPF: the capture loop hands it a Profile of plain values (probe labels,
// processes, symbolized frames and counts) and it writes them. Samples
// share their frames (Sample.User and Kernel hold *Frame, interned with
// Interner): a profile holds far more frame references than distinct frames,
// and the writers render each frame's name once (frameNames). Samples
// share whole stacks too (Interner.Stack): a system-wide profile has a
// sample per process and stack (~1M after 12 s of malloc calls in a shell
// loop), most of them one of a few thousand stacks, as frames carry
// addresses in their files (Frame.Address), not the process's. Collapsed
// stacks and flamegraphs are made from one prefix tree of frame names
// (stackTree): a line's text or a stack's frame list is never held, so
// 2M distinct stacks are written in a few hundred megabytes. A long
// run's samples of exited processes are merged without their pid
// (Merged) and, past a number, moved to a file of their own (Spill) and
// read back at the end, so its memory does not grow with the distinct
// stacks the machine runs.
//
// # Formats
//
//   - Collapsed stacks (WriteCollapsed): one sorted, merged line per stack,
//     "[probe;]comm;user root..leaf;kernel root..leaf_[k] COUNT", the format
//     flamegraph tools and speedscope read. Frame naming is FrameName's, and
//     Sanitize says how ';' and newlines inside names are replaced.
//   - SVG flamegraphs (WriteSVG): a self-contained file with hover details,
//     click-to-zoom and a regular-expression search in a small embedded
//     script. Widths are proportional to counts, colors are stable hashes of
//     frame names with a hue band per kind (user, inlined, kernel, meta),
//     frames under 0.1% of the total are left out, and names are truncated
//     with an ellipsis to fit. Readable at the default width of 1200 px.
//   - pprof (WritePprof): gzipped profile.proto through
//     github.com/google/pprof/profile, with probe/comm/pid labels, mappings
//     with build-ids, functions with files and lines, and inline frames as
//     extra lines of one location.
//   - Layout (Plan, Write): the -o rules, checked and fixed before tracing
//     starts (kind, directory held open, no symbolic links), and safe
//     writes: each destination on its own, through temporary files created
//     with O_EXCL|O_NOFOLLOW and renamed into place, nothing left behind
//     by one that fails.
//
// # Why the flamegraph renderer is written here
//
// No maintained Go library renders flamegraphs, and the reference
// implementations (flamegraph.pl, inferno) are CDDL-licensed, so their code
// must not be ported. This renderer is an independent design: it takes the
// frames wide enough to draw from the stacks' prefix tree, lays them out depth-first with children in name
// order, and writes one <g> (title, rect, text) per frame; the script reads
// geometry back from those elements, so the SVG stays the single source of
// truth and there is no second data blob. Only the general idea of a
// flamegraph and the collapsed format (a de-facto standard) are shared.
package output
