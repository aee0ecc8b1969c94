package derived

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"time"
)

// AsideTimeFormat is the time in the name of a part moved aside, in UTC:
// DATA/search.corrupt-20261203T110500Z.
const AsideTimeFormat = "20060102T150405Z"

// MoveAside renames dir to dir.corrupt-<now, UTC>, with -2, -3… when that
// name is taken, and returns the new path. A dir that is not there is no
// error ("" is returned).
func MoveAside(dir string) (string, error) {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	base := dir + ".corrupt-" + time.Now().UTC().Format(AsideTimeFormat)
	to := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(to); errors.Is(err, os.ErrNotExist) {
			break
		}
		to = fmt.Sprintf("%s-%d", base, i)
	}
	if err := os.Rename(dir, to); err != nil {
		return "", fmt.Errorf("move %s aside: %w", dir, err)
	}
	return to, nil
}

// PanicError is a library's panic, recovered.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Recover, deferred, turns a panic into a *PanicError in *err:
//
//	defer derived.Recover(&err)
func Recover(err *error) {
	if r := recover(); r != nil {
		*err = &PanicError{Value: r, Stack: debug.Stack()}
	}
}
