package ingest

import "errors"

// Sentinel errors of the ingest package.
var (
	// ErrChangedWhileHashing: the file's size or mtime moved during the
	// hash pass; nothing was stored and the file is retried when it settles.
	ErrChangedWhileHashing = errors.New("file changed while hashing")
)
