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
