// Package docfiles holds one test: that every package of the module has a
// doc.go, and that its doc.go names all of the package's files and no
// file that is not there.
//
// Run it with
//
//	go test ./internal/docfiles/
//
// (it is part of `go test ./...` and `make test`).
//
// # Files
//
// It has no code of its own: docfiles_test.go walks the module. It starts
// no goroutine and keeps no state.
package docfiles
