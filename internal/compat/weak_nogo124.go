//go:build !go1.24

package compat

import "sync/atomic"

// Weak stands in for weak.Pointer, which go1.24 brings: it holds its
// pointer strongly, so the T lives at least as long as the Weak, until
// Clear drops the pointer. A user that keeps many must bound how many
// it keeps, with Clear. Copies of a Weak share its pointer, and Weaks
// made by separate MakeWeak calls are not equal (a weak.Pointer compares
// equal to any other made from the same pointer).
type Weak[T any] struct{ p *atomic.Pointer[T] }

// MakeWeak returns a Weak that holds p.
func MakeWeak[T any](p *T) Weak[T] {
	w := Weak[T]{new(atomic.Pointer[T])}
	w.p.Store(p)
	return w
}

// Value returns the pointer w was made from, or nil once Clear has run
// on w or a copy of it (or for the zero Weak).
func (w Weak[T]) Value() *T {
	if w.p == nil {
		return nil
	}
	return w.p.Load()
}

// Clear drops w's pointer, for w and every copy of it, as if the object
// had been collected: Value returns nil from then on. It exists only
// before go1.24, where the user of a Weak decides when to let go.
func (w Weak[T]) Clear() {
	if w.p != nil {
		w.p.Store(nil)
	}
}

// WeakPointers reports whether Weak is a weak pointer (go1.24 and later)
// rather than a strong one.
const WeakPointers = false
