package core

import (
	"github.com/locksmith-go/locksmith/internal/gid"
	"github.com/locksmith-go/locksmith/misuse"
)

// The sentinels the public packages share, under the names the engine
// uses; they are misuse's values, so errors.Is matches a misuse whichever
// package's name the caller uses.
var (
	ErrNotOwner   = misuse.ErrNotOwner
	ErrNilContext = misuse.ErrNilContext
	ErrStranded   = misuse.ErrStranded
	ErrReadLocker = misuse.ErrReadLocker
)

// Error is the panic value for a broken lock contract: misuse.Error, the
// type a user names to read one with errors.As.
type Error = misuse.Error

// Misuse returns an *Error with the given message, matching sentinel, made
// by the calling goroutine. Every misuse panic of the library comes from
// here (or LostError), so that each one is an *Error with its Goroutine
// set.
func Misuse(msg string, sentinel error) *Error {
	return &Error{Msg: msg, Err: sentinel, Goroutine: gid.Get()}
}
