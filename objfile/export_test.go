package objfile

// DemangledSoFar is the set of indexes into o.Funcs whose names were
// demangled (the cache DemangledName fills), for tests of laziness.
func DemangledSoFar(o *Object) map[int]bool {
	o.names.mu.Lock()
	defer o.names.mu.Unlock()
	out := map[int]bool{}
	for i := range o.names.m {
		out[i] = true
	}
	return out
}
