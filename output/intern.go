package output

import (
	"slices"
	"unsafe"
)

// Frames interns frames, so that the samples of a profile share each
// distinct frame: 93K distinct stacks of ~22 frames (manystacks under a
// uprobe) are 2M frame references but ~50 distinct frames, and as values
// they held 295 MB. It interns whole stacks too (Stack): the samples of
// many processes running one program share theirs. The zero value is
// ready to use; not safe for concurrent use.
type Frames struct {
	m      map[Frame]*Frame
	stacks map[uint64][]*Frame // by a hash of the frame pointers (stackKey)
}

// Intern returns the one *Frame equal to f. Interned frames are shared:
// never modify one.
func (fs *Frames) Intern(f Frame) *Frame {
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
func (fs *Frames) Len() int { return len(fs.m) }

// Stack returns the one stack holding the same frames as frames (the same
// pointers, in order; a copy the first time), nil for an empty one.
// Samples with equal stacks then share one slice, which the writers merge
// by identity before rendering any name (sampleID): a system-wide run
// counts the stacks of each process apart, ~1M samples in 12 s, most of
// them stacks other processes of the same program share. Never modify a
// returned stack.
func (fs *Frames) Stack(frames []*Frame) []*Frame {
	if len(frames) == 0 {
		return nil
	}
	if fs.stacks == nil {
		fs.stacks = map[uint64][]*Frame{}
	}
	// A hash, not the pointers' bytes, keys the stacks: 2M distinct
	// stacks of 46 frames would hold 740 MB of keys. A key held by
	// another stack moves on to the next.
	for h := stackKey(frames); ; h++ {
		s, ok := fs.stacks[h]
		if !ok {
			s = slices.Clip(slices.Clone(frames))
			fs.stacks[h] = s
			return s
		}
		if slices.Equal(s, frames) {
			return s
		}
	}
}

// stackKey hashes the frame pointers of a stack (FNV-1a over the words).
func stackKey(frames []*Frame) uint64 {
	h := uint64(0xcbf29ce484222325)
	for _, f := range frames {
		h ^= uint64(uintptr(unsafe.Pointer(f)))
		h *= 0x100000001b3
		h ^= h >> 29
	}
	return h
}

// stackID is a stack's identity: its first element and length. Stacks
// from Frames.Stack with the same frames have the same identity; others
// differ (and merge later, by name).
type stackID struct {
	first **Frame
	n     int
}

func idOf(frames []*Frame) stackID { return stackID{unsafe.SliceData(frames), len(frames)} }
