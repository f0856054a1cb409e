package output

import "github.com/probee/probee/internal/prefixtree"

// Interner interns frames, so that the samples of a profile share each
// distinct frame: 93K distinct stacks of ~22 frames (manystacks under a
// uprobe) are 2M frame references but ~50 distinct frames, and as values
// they held 295 MB. It interns whole stacks too (Stack), in one prefix
// tree: the samples of many processes running one program share theirs,
// and distinct stacks share their outer frames (2M distinct stacks of 46
// frames held 760 MB as slices, ~240 MB as a tree). The zero value is
// ready to use; not safe for concurrent use (reading its stacks is).
type Interner struct {
	m      map[Frame]*Frame
	stacks *prefixtree.Tree[*Frame]
	// paths are the last two stacks added (a count's user and kernel
	// stacks come in turns), last the one used last: a stack is added
	// from where it leaves the one it shares most with (prefixtree.AddAlong).
	paths [2]prefixtree.Path[*Frame]
	last  int
}

// Intern returns the one *Frame equal to f. Interned frames are shared:
// never modify one.
func (fs *Interner) Intern(f Frame) *Frame {
	if p, ok := fs.m[f]; ok {
		return p
	}
	if fs.m == nil {
		fs.m = map[Frame]*Frame{}
	}
	p := new(Frame) // not &f: f would be moved to the heap on every call
	*p = f
	fs.m[f] = p
	return p
}

// Len is the number of distinct frames interned.
func (fs *Interner) Len() int { return len(fs.m) }

// Freeze makes the stacks cheaper to hold once no more are added (see
// prefixtree.Tree.Freeze): a profile's, once it is made.
func (fs *Interner) Freeze() {
	if fs.stacks != nil {
		fs.stacks.Freeze()
	}
}

// Stack returns the one Stack of frames (root first). Samples with equal
// stacks then share one Stack, which the writers merge by identity before
// rendering any name (sampleID): a system-wide run counts the stacks of
// each process apart, ~1M samples in 12 s, most of them stacks other
// processes of the same program share.
func (fs *Interner) Stack(frames []*Frame) Stack {
	if len(frames) == 0 {
		return Stack{}
	}
	if fs.stacks == nil {
		fs.stacks = prefixtree.New[*Frame]()
	}
	i := fs.pathFor(frames)
	return Stack{fs.stacks, fs.stacks.AddAlong(&fs.paths[i], frames)}
}

// pathFor is the path frames share most with, else the one used less
// recently.
func (fs *Interner) pathFor(frames []*Frame) int {
	a, b := fs.paths[0].Shares(frames), fs.paths[1].Shares(frames)
	i := 1 - fs.last
	switch {
	case a > b:
		i = 0
	case b > a:
		i = 1
	}
	fs.last = i
	return i
}
