// Package doccheck holds tests that keep the repository's documentation true
// to the repository itself; it has no code of its own.
//
//   - TestMarkdownLinks: every relative link or image target in every
//     markdown file ([text](path), [text](path#anchor), [ref]: path) names a
//     file or directory inside the repository, and an #anchor names a
//     heading of the target markdown file (GitHub's heading ids). Links with
//     a scheme (https:, mailto:) are not checked; links inside code spans and
//     fenced blocks are not links.
//   - TestGoDocRefs: every markdown path a Go comment mentions (package docs
//     point to docs/spec-language.md and the like), with its #anchor if any,
//     resolves the same way, relative to the Go file's directory or to the
//     repository root.
//   - TestFixturesREADME: tests/fixtures/README.md lists exactly the binaries
//     tests/fixtures/Makefile builds.
//
// The repository is found from the test's working directory (the directory
// holding go.mod) and walked on the file system, skipping hidden, bin,
// build, cache and testdata directories, so the tests run as a normal user,
// without git, fixtures or network.
package doccheck
