package store

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"
)

// Sentinel errors of the store. Wrapped errors say which key or value.
var (
	// ErrNotFound: no root holds the CID, path or root asked for.
	ErrNotFound = errors.New("not found")
	// ErrAliasConflict: the CID alias is held by another root. The key-set
	// member was recorded; the alias was not repointed.
	ErrAliasConflict = errors.New("alias held by another root")
	// ErrWeakLink: two roots may only be joined through a strong digest
	// (rank >= 30); a midhash alone never joins anything.
	ErrWeakLink = errors.New("weak link: roots join only through a strong digest")
	// ErrReservedField: the field name belongs to the schema (filePath,
	// sizeByte, mtime, duplicates, cids/…) and is not written by SetFields.
	ErrReservedField = errors.New("reserved field name")
	// ErrInvalidField: empty field name, or a name with an empty segment.
	ErrInvalidField = errors.New("invalid field name")
	// ErrNotLocal: the file is known only from peers: a household edits
	// only its own files.
	ErrNotLocal = errors.New("a file known only from peers: a household edits only its own files")
	// ErrTooLarge: a field name, value or edit past its cap.
	ErrTooLarge = errors.New("too large")
	// ErrPathExists: a rename target is already known.
	ErrPathExists = errors.New("path already known")
	// ErrRedisNotInstalled: the redis-server binary is missing.
	ErrRedisNotInstalled = errors.New("redis-server not installed")
	// ErrDataDirInUse: another process runs the managed redis-server of
	// this data directory.
	ErrDataDirInUse = errors.New("data directory in use")
)

// IsUnavailable reports whether err means Redis could not be reached or
// is not ready (connection refused or reset, timeouts, LOADING after a
// restart) rather than a definite answer. Callers retry such errors with
// backoff; every other error is final.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	for _, final := range []error{ErrNotFound, ErrAliasConflict, ErrWeakLink, ErrReservedField, ErrInvalidField, ErrNotLocal, ErrTooLarge, ErrPathExists, ErrRedisNotInstalled, ErrDataDirInUse, context.Canceled} {
		if errors.Is(err, final) {
			return false
		}
	}
	var reply redis.Error
	if errors.As(err, &reply) {
		msg := reply.Error()
		return strings.HasPrefix(msg, "LOADING") || strings.HasPrefix(msg, "BUSY") || strings.HasPrefix(msg, "TRYAGAIN") || strings.HasPrefix(msg, "MASTERDOWN")
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, redis.ErrPoolTimeout)
}
