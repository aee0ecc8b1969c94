package ingest

// Touch asks the loop to look at path again, as if fsnotify had reported
// it: once it settles it is re-hashed if its size or mtime moved. A caller
// that found a file changed behind the ingester's back (the API, before
// serving bytes) uses it. It never blocks: when the loop is busy or
// stopped the request is dropped, and the next scan finds the change.
func (in *Ingester) Touch(path string) {
	select {
	case in.marks <- []mark{{path: path}}:
	default:
	}
}

// Rehash asks the loop to hash path again even though its size and mtime
// did not move: its bytes were found not to be what was hashed (a block
// read for a peer no longer hashes to its CID). Like Touch it never
// blocks; the path is hashed again the next time the loop looks at it.
func (in *Ingester) Rehash(path string) {
	in.suspect.add(path)
	in.Touch(path)
}

// remove takes p out of the set, reporting whether it was in it.
func (s *pathSet) remove(p string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.m[p] {
		return false
	}
	delete(s.m, p)
	return true
}
