//go:build go1.24

package compat

import "weak"

// Weak is a weak pointer to a T (see weak.Pointer): it does not keep the
// T alive, and Value returns nil once the T is collected. The zero Weak
// is a nil pointer. Weaks made from the same pointer are equal.
type Weak[T any] struct{ p weak.Pointer[T] }

// MakeWeak returns a weak pointer to p (see weak.Make).
func MakeWeak[T any](p *T) Weak[T] { return Weak[T]{weak.Make(p)} }

// Value returns the pointer w was made from, or nil if the object has
// been collected (or w is the zero Weak).
func (w Weak[T]) Value() *T { return w.p.Value() }

// Std returns w as the weak.Pointer it is (go1.24 and later only), for
// code that reads the runtime's handle behind it (internal/rt).
func (w Weak[T]) Std() weak.Pointer[T] { return w.p }

// WeakPointers reports whether Weak is a weak pointer (go1.24 and later)
// rather than a strong one.
const WeakPointers = true
