//go:build go1.25

// testing/synctest.Test is Go 1.25; the module supports Go 1.24, whose
// toolchain skips this file.

package batchqueue_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/bench/batchqueue"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func seq(from, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = from + i
	}
	return s
}

func TestNewValidatesCapacity(t *testing.T) {
	assert.PanicsWithValue(t, "batchqueue: New with capacity 0", func() { batchqueue.New[int](0) })
	assert.PanicsWithValue(t, "batchqueue: New with capacity -3", func() { batchqueue.New[int](-3) })
}

func TestFIFO(t *testing.T) {
	q := batchqueue.New[string](3)
	assert.Equal(t, 3, q.Cap())
	for _, s := range []string{"a", "b", "c"} {
		require.NoError(t, q.Put(s))
	}
	assert.Equal(t, 3, q.Len())
	for _, want := range []string{"a", "b", "c"} {
		got, err := q.Take()
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	assert.Zero(t, q.Len())
}

func TestWrapAround(t *testing.T) {
	// Every head position, every batch size up to twice the capacity.
	const capacity = 5
	for head := range capacity {
		for n := 1; n <= capacity; n++ {
			t.Run(fmt.Sprintf("head=%d/n=%d", head, n), func(t *testing.T) {
				q := batchqueue.New[int](capacity)
				for i := range head { // move the head
					require.NoError(t, q.Put(-1))
					_, err := q.Take()
					require.NoError(t, err, i)
				}
				k, err := q.PutBatch(seq(100, n))
				require.NoError(t, err)
				assert.Equal(t, n, k)
				dst := make([]int, n)
				k, err = q.TakeBatch(dst)
				require.NoError(t, err)
				assert.Equal(t, n, k)
				assert.Equal(t, seq(100, n), dst)
				assert.Zero(t, q.Len())
			})
		}
	}
}

func TestMixedSingleAndBatch(t *testing.T) {
	q := batchqueue.New[int](8)
	require.NoError(t, q.Put(0))
	_, err := q.PutBatch(seq(1, 4))
	require.NoError(t, err)
	require.NoError(t, q.Put(5))
	v, err := q.Take()
	require.NoError(t, err)
	assert.Equal(t, 0, v)
	dst := make([]int, 5)
	n, err := q.TakeBatch(dst)
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	assert.Equal(t, seq(1, 5), dst)
}

func TestEmptyBatches(t *testing.T) {
	q := batchqueue.New[int](1)
	n, err := q.PutBatch(nil)
	assert.Zero(t, n)
	assert.NoError(t, err)
	n, err = q.TakeBatch(nil)
	assert.Zero(t, n)
	assert.NoError(t, err, "an empty TakeBatch does not wait")
}

func TestPutWaitsWhileFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := batchqueue.New[int](2)
		require.NoError(t, q.Put(1))
		require.NoError(t, q.Put(2))
		done := make(chan error)
		go func() { done <- q.Put(3) }()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Put returned on a full queue")
		default:
		}
		v, err := q.Take()
		require.NoError(t, err)
		assert.Equal(t, 1, v)
		require.NoError(t, <-done)
		assert.Equal(t, 2, q.Len())
	})
}

func TestTakeWaitsWhileEmpty(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := batchqueue.New[int](2)
		got := make(chan int)
		go func() {
			v, err := q.Take()
			assert.NoError(t, err)
			got <- v
		}()
		synctest.Wait()
		select {
		case <-got:
			t.Fatal("Take returned on an empty queue")
		default:
		}
		require.NoError(t, q.Put(42))
		assert.Equal(t, 42, <-got)
	})
}

func TestBatchLargerThanCapacityMovesInChunks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := batchqueue.New[int](4)
		put := make(chan int)
		go func() {
			n, err := q.PutBatch(seq(0, 10))
			assert.NoError(t, err)
			put <- n
		}()
		synctest.Wait()
		assert.Equal(t, 4, q.Len(), "the first chunk fills the queue; PutBatch waits for room")

		var got []int
		for range 10 {
			v, err := q.Take()
			require.NoError(t, err)
			got = append(got, v)
		}
		assert.Equal(t, 10, <-put)
		assert.Equal(t, seq(0, 10), got)

		// And the other way: a TakeBatch larger than the queue.
		taken := make(chan []int)
		go func() {
			dst := make([]int, 9)
			n, err := q.TakeBatch(dst)
			assert.NoError(t, err)
			taken <- dst[:n]
		}()
		for i := range 9 {
			require.NoError(t, q.Put(100+i))
		}
		assert.Equal(t, seq(100, 9), <-taken)
	})
}

func TestBatchesStayTogether(t *testing.T) {
	// A batch that fits goes in under one Lock: another putter's items do
	// not come between its items.
	q := batchqueue.New[int](1000)
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range 20 {
				_, err := q.PutBatch(seq(p*10000+b*10, 10))
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	dst := make([]int, 800)
	n, err := q.TakeBatch(dst)
	require.NoError(t, err)
	require.Equal(t, 800, n)
	for i := 0; i < n; i += 10 {
		assert.Zero(t, dst[i]%10, "batch starts at %d", i)
		assert.Equal(t, seq(dst[i], 10), dst[i:i+10])
	}
}

func TestClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := batchqueue.New[int](2)
		require.NoError(t, q.Put(1))
		q.Close()
		q.Close() // no-op
		assert.ErrorIs(t, q.Put(2), batchqueue.ErrClosed)
		n, err := q.PutBatch([]int{2, 3})
		assert.Zero(t, n)
		assert.ErrorIs(t, err, batchqueue.ErrClosed)

		v, err := q.Take()
		require.NoError(t, err, "items left in a closed queue are still taken")
		assert.Equal(t, 1, v)
		v, err = q.Take()
		assert.ErrorIs(t, err, batchqueue.ErrClosed, "Take on a closed, empty queue")
		assert.Zero(t, v)
		n, err = q.TakeBatch(make([]int, 3))
		assert.Zero(t, n)
		assert.ErrorIs(t, err, batchqueue.ErrClosed)
	})
}

func TestCloseWakesWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		full := batchqueue.New[int](2)
		empty := batchqueue.New[int](2)
		require.NoError(t, full.Put(0))
		errs := make(chan error, 4)
		go func() { errs <- full.Put(1) }() // fits
		go func() {
			n, err := full.PutBatch(seq(10, 3)) // waits for room after nothing or one
			assert.Less(t, n, 3)
			errs <- err
		}()
		go func() {
			_, err := empty.Take()
			errs <- err
		}()
		go func() {
			n, err := empty.TakeBatch(make([]int, 2))
			assert.Zero(t, n)
			errs <- err
		}()
		synctest.Wait()
		full.Close()
		empty.Close()
		var closed int
		for range 4 {
			if err := <-errs; err != nil {
				assert.ErrorIs(t, err, batchqueue.ErrClosed)
				closed++
			}
		}
		assert.GreaterOrEqual(t, closed, 3, "the waiters return ErrClosed")
		assert.Equal(t, 2, full.Len(), "what went in before Close stays")
	})
}

func TestPartialBatchOnClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := batchqueue.New[int](2)
		put := make(chan int)
		go func() {
			n, err := q.PutBatch(seq(0, 5))
			assert.ErrorIs(t, err, batchqueue.ErrClosed)
			put <- n
		}()
		synctest.Wait()
		q.Close()
		assert.Equal(t, 2, <-put, "PutBatch reports how many went in")

		dst := make([]int, 5)
		n, err := q.TakeBatch(dst)
		assert.ErrorIs(t, err, batchqueue.ErrClosed)
		assert.Equal(t, 2, n, "TakeBatch reports how many it took")
		assert.Equal(t, []int{0, 1}, dst[:n])
	})
}

func TestWakeupsArePassedOn(t *testing.T) {
	// One batch feeds several waiting takers, and one TakeBatch makes room
	// for several waiting putters, though each wakes only one goroutine:
	// the woken one passes the turn on.
	synctest.Test(t, func(t *testing.T) {
		q := batchqueue.New[int](3)
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := q.Take()
				assert.NoError(t, err)
			}()
		}
		synctest.Wait()
		_, err := q.PutBatch(seq(0, 3))
		require.NoError(t, err)
		wg.Wait()

		_, err = q.PutBatch(seq(0, 3))
		require.NoError(t, err)
		for i := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				assert.NoError(t, q.Put(10+i))
			}()
		}
		synctest.Wait()
		n, err := q.TakeBatch(make([]int, 3))
		require.NoError(t, err)
		assert.Equal(t, 3, n)
		wg.Wait()
		assert.Equal(t, 3, q.Len())
	})
}

// hammer has producers and consumers move items with a random mix of Put,
// PutBatch, Take and TakeBatch, and checks that every item arrives once
// and that each consumer sees each producer's items in order.
func hammer(t *testing.T, procs, producers, consumers, items, capacity int) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	q := batchqueue.New[int](capacity)
	var pwg, cwg sync.WaitGroup
	for p := range producers {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			r := rand.New(rand.NewPCG(uint64(p), 1))
			for i := 0; i < items; {
				if r.IntN(2) == 0 {
					assert.NoError(t, q.Put(p*items+i))
					i++
					continue
				}
				n := min(1+r.IntN(2*capacity), items-i)
				k, err := q.PutBatch(seq(p*items+i, n))
				assert.NoError(t, err)
				assert.Equal(t, n, k)
				i += n
			}
		}()
	}
	got := make([][]int, consumers)
	for c := range consumers {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 2))
			for {
				if r.IntN(2) == 0 {
					v, err := q.Take()
					if err != nil {
						assert.ErrorIs(t, err, batchqueue.ErrClosed)
						return
					}
					got[c] = append(got[c], v)
					continue
				}
				dst := make([]int, 1+r.IntN(2*capacity))
				n, err := q.TakeBatch(dst)
				got[c] = append(got[c], dst[:n]...)
				if err != nil {
					assert.ErrorIs(t, err, batchqueue.ErrClosed)
					return
				}
			}
		}()
	}
	pwg.Wait()
	q.Close()
	cwg.Wait()

	seen := make([]bool, producers*items)
	for _, vs := range got {
		last := make([]int, producers)
		for i := range last {
			last[i] = -1
		}
		for _, v := range vs {
			require.False(t, seen[v], "item %d taken twice", v)
			seen[v] = true
			p := v / items
			assert.Greater(t, v, last[p], "producer %d's items out of order", p)
			last[p] = v
		}
	}
	for v, ok := range seen {
		require.True(t, ok, "item %d lost", v)
	}
}

func TestHammer(t *testing.T) {
	items := 5000
	if testing.Short() {
		items = 500
	}
	for _, procs := range []int{1, 2, 4} {
		for _, shape := range []struct{ producers, consumers, capacity int }{{1, 1, 1}, {2, 2, 4}, {4, 1, 16}, {1, 4, 16}, {3, 3, 100}} {
			t.Run(fmt.Sprintf("procs=%d/p=%d/c=%d/cap=%d", procs, shape.producers, shape.consumers, shape.capacity), func(t *testing.T) {
				hammer(t, procs, shape.producers, shape.consumers, items, shape.capacity)
			})
		}
	}
}
