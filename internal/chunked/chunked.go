// Package chunked provides a list stored in fixed-size blocks, for the
// detector's registries of locks, which grow and shrink in waves as
// locks are made and collected.
//
// Rejected alternative: a slice. Appending to a large slice copies it
// whole each time it grows (by a quarter, past 256 entries), and giving
// back what a wave left means copying it again: with a lock's Meta and
// graph node registered in slices, the copies were a tenth of the bytes
// that nesting a pair of new locks allocated in Order mode. A List's
// append writes into the last block and allocates a block per blockLen
// entries; nothing is ever copied.
package chunked

// blockLen is how many entries a block holds.
const blockLen = 512

// List is a sequence of T in blocks of blockLen. The zero value is an
// empty list. It is not safe for concurrent use; each user guards it.
type List[T any] struct {
	blocks []*[blockLen]T // full but for the last in use; at most one spare past it
	n      int
}

// Len returns the number of entries.
func (l *List[T]) Len() int { return l.n }

// At returns the address of entry i, which stays valid until the entry
// is removed by Pop.
func (l *List[T]) At(i int) *T {
	if uint(i) >= uint(l.n) {
		panic("chunked: index out of range")
	}
	return &l.blocks[i/blockLen][i%blockLen]
}

// Append adds v at the end.
func (l *List[T]) Append(v T) {
	if l.n == len(l.blocks)*blockLen {
		l.blocks = append(l.blocks, new([blockLen]T))
	}
	l.blocks[l.n/blockLen][l.n%blockLen] = v
	l.n++
}

// Pop removes the last entry, clearing its place, and frees a block once
// two past the last entry are empty (one is kept, so that a list going
// up and down across a block's edge does not allocate each time).
func (l *List[T]) Pop() {
	if l.n == 0 {
		panic("chunked: Pop of an empty list")
	}
	l.n--
	var zero T
	l.blocks[l.n/blockLen][l.n%blockLen] = zero
	if need := (l.n + blockLen - 1) / blockLen; len(l.blocks) > need+1 {
		l.blocks[len(l.blocks)-1] = nil
		l.blocks = l.blocks[:len(l.blocks)-1]
	}
}

// RemoveSwap removes entry i by moving the last entry into its place,
// and returns the address of i's new occupant (nil if i was the last).
func (l *List[T]) RemoveSwap(i int) *T {
	last := l.n - 1
	p := l.At(i)
	if i == last {
		l.Pop()
		return nil
	}
	*p = *l.At(last)
	l.Pop()
	return p
}
