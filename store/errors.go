package store

import "errors"

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
	// ErrPathExists: a rename target is already known.
	ErrPathExists = errors.New("path already known")
	// ErrRedisNotInstalled: the redis-server binary is missing.
	ErrRedisNotInstalled = errors.New("redis-server not installed")
)
