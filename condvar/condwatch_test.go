package condvar_test

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/internal/compat"
	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/rt"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// TestCondWaitRegistered: with Cond waits watched, every goroutine parked
// in a Wait is registered as waiting on its Cond, those beyond what the
// Cond's own slots hold too (in the registry's table), and no
// registration is left once the waits have returned. Ticket waits
// register in the Cond's slots where weak pointers can list the Cond
// without keeping it (go1.24 on, not purego).
func TestCondWaitRegistered(t *testing.T) {
	was := core.CondWatch()
	core.SetCondWatch(true)
	defer core.SetCondWatch(was)
	forEachKind(t, func(t *testing.T, _ lockKind, l sync.Locker, _ func() bool, c *condvar.Cond) {
		const n = core.CondSlotCount + 2
		done := false // guarded by l
		ids := make(chan int64, n)
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ids <- testutil.GoroutineID()
				l.Lock()
				defer l.Unlock()
				for !done {
					c.Wait()
				}
			}()
		}
		gs := make([]int64, n)
		for i := range gs {
			gs[i] = <-ids
		}
		testutil.WaitFor(t, "every waiter parked", func() bool { return c.Waiters() == n })
		for _, g := range gs {
			ci, ok := core.CondWaitOf(g)
			if assert.True(t, ok, "goroutine %d is registered", g) {
				assert.Equal(t, uintptr(unsafe.Pointer(c)), ci.Tag.Cond)
			}
		}
		inSlots, listed := condvar.SlotWaits(c)
		assert.Equal(t, condvar.TicketPath && compat.WeakPointers && rt.WeakPeeks(), listed,
			"the Cond is listed for its slots where they are used")
		if listed {
			assert.Equal(t, core.CondSlotCount, inSlots, "ticket waits fill the Cond's slots first")
		} else {
			assert.Zero(t, inSlots)
		}
		l.Lock()
		done = true
		c.Broadcast()
		l.Unlock()
		wg.Wait()
		for _, g := range gs {
			_, ok := core.CondWaitOf(g)
			assert.False(t, ok, "goroutine %d's wait ended", g)
		}
		inSlots, _ = condvar.SlotWaits(c)
		assert.Zero(t, inSlots)
	})
}

// failingUnlock is a Locker whose Unlock panics while fail is set,
// without unlocking.
type failingUnlock struct {
	sync.Mutex
	fail bool
}

func (l *failingUnlock) Unlock() {
	if l.fail {
		panic("unlock fails")
	}
	l.Mutex.Unlock()
}

// TestCondWaitRegistrationDropped: a ticket wait whose release of the lock
// panics leaves no registration behind, in the Cond's slots or elsewhere,
// also while its ticket stays unnotified behind an older waiter's.
func TestCondWaitRegistrationDropped(t *testing.T) {
	was := core.CondWatch()
	core.SetCondWatch(true)
	defer core.SetCondWatch(was)
	l := &failingUnlock{}
	c := condvar.New(l)
	done := false // guarded by l
	older := make(chan struct{})
	go func() {
		defer close(older)
		l.Lock()
		defer l.Unlock()
		for !done {
			c.Wait()
		}
	}()
	testutil.WaitFor(t, "the older waiter parked", func() bool { return c.Waiters() == 1 })
	l.Lock()
	l.fail = true
	assert.Equal(t, "unlock fails", testutil.Catch(c.Wait))
	l.fail = false
	_, ok := core.CondWaitOf(testutil.GoroutineID())
	assert.False(t, ok, "the wait that failed is not registered")
	inSlots, listed := condvar.SlotWaits(c)
	if listed {
		assert.Equal(t, 1, inSlots, "the older waiter's slot only")
	}
	assert.Equal(t, condvar.TicketPath && compat.WeakPointers && rt.WeakPeeks(), listed)
	assert.Equal(t, 1, c.Waiters())
	done = true
	c.Broadcast()
	l.Unlock()
	<-older
}
