package chunked_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/internal/chunked"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestListMatchesSlice: a List driven through appends, pops and swap
// removals, in waves across several blocks, holds what a slice given the
// same operations holds, clears what it removes, and keeps at most one
// empty block past its last entry.
func TestListMatchesSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var l chunked.List[*int]
	var ref []*int
	check := func() {
		t.Helper()
		require.Equal(t, len(ref), l.Len())
		for i, v := range ref {
			require.Same(t, v, *l.At(i), "entry %d", i)
		}
		need := (len(ref) + chunked.BlockLen - 1) / chunked.BlockLen
		require.LessOrEqual(t, l.Blocks(), need+1, "blocks for %d entries", len(ref))
	}
	for wave := range 6 {
		grow := wave%2 == 0
		for range 3 * chunked.BlockLen {
			switch op := r.IntN(4); {
			case grow && op < 3, len(ref) == 0:
				v := new(int)
				l.Append(v)
				ref = append(ref, v)
			case op%2 == 0:
				l.Pop()
				ref = ref[:len(ref)-1]
			default:
				i := r.IntN(len(ref))
				p := l.RemoveSwap(i)
				last := len(ref) - 1
				ref[i] = ref[last]
				ref = ref[:last]
				if i == last {
					assert.Nil(t, p)
				} else {
					assert.Same(t, ref[i], *p)
				}
			}
		}
		check()
	}
	for l.Len() > 0 {
		l.Pop()
	}
	assert.LessOrEqual(t, l.Blocks(), 1)
}

// TestListPopClears: a removed entry's place is cleared, so that a List
// keeps nothing alive that it no longer holds.
func TestListPopClears(t *testing.T) {
	var l chunked.List[*int]
	for range chunked.BlockLen + 1 {
		l.Append(new(int))
	}
	p := l.At(chunked.BlockLen - 1)
	l.Pop()
	l.Pop()
	assert.Nil(t, *p)
}

func TestListOutOfRange(t *testing.T) {
	var l chunked.List[int]
	assert.Panics(t, func() { l.At(0) })
	assert.Panics(t, func() { l.Pop() })
	l.Append(1)
	assert.Panics(t, func() { l.At(1) })
	assert.Panics(t, func() { l.At(-1) })
}
