package core

import (
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/compat"
	"github.com/locksmith-go/locksmith/internal/rt"
)

// slotCond is what the slots need of a Cond: a notify list and the slots.
type slotCond struct {
	_     [3]uintptr // not at the object's start, as in a Cond
	nl    rt.NotifyList
	watch CondSlots
}

func newSlotCond(t *testing.T) (*slotCond, *CondTag) {
	t.Helper()
	if !condSlotsUsable {
		t.Skip("weak pointers are strong, or rt.WeakLoad calls Value, in this build")
	}
	c := new(slotCond)
	tag := &CondTag{Cond: uintptr(unsafe.Pointer(c)), Type: "test"}
	require.True(t, WatchCondSlots(compat.MakeWeak(c), tag, unsafe.Offsetof(c.nl), unsafe.Offsetof(c.watch)))
	return c, tag
}

// take takes the next ticket of c's notify list, as the runtime's
// notifyListAdd does.
func (c *slotCond) take() uint32 { return atomic.AddUint32(&c.nl.Wait, 1) - 1 }

// notify notifies the oldest ticket, as notifyListNotifyOne does.
func (c *slotCond) notify() { atomic.AddUint32(&c.nl.Notify, 1) }

// slotWaits returns the registered ticket waits of tag's Cond, by goroutine.
func slotWaits(tag *CondTag) map[int64]CondWaitInfo {
	m := map[int64]CondWaitInfo{}
	for _, ci := range condSlotWaits(nil) {
		if ci.Tag == tag {
			m[ci.G] = ci
		}
	}
	return m
}

func listed(tag *CondTag) bool {
	lockCondConds()
	defer condConds.mu.Unlock()
	for _, e := range condConds.all {
		if e.tag == tag {
			return true
		}
	}
	return false
}

// TestCondSlots: a claimed slot is a wait until its ticket is notified,
// with nothing written when the wait ends; a ticket given up clears its
// slot; a slot whose ticket is still waiting is not claimed again, and
// with every slot taken Claim and ClaimOther fail; CondWaiting and
// CondWaitOf report the slots' waits, each wait with an Epoch of its own.
func TestCondSlots(t *testing.T) {
	c, tag := newSlotCond(t)
	t0 := c.take()
	require.True(t, c.watch.Claim(101, t0, &c.nl))
	got := slotWaits(tag)
	require.Len(t, got, 1)
	ci, ok := CondWaitOf(101)
	require.True(t, ok)
	assert.Equal(t, got[101], ci)
	assert.Same(t, tag, ci.Tag)
	first := ci.Epoch
	var all []int64
	CondWaiting(func(ci CondWaitInfo) {
		if ci.Tag == tag {
			all = append(all, ci.G)
		}
	})
	assert.Equal(t, []int64{101}, all)

	c.notify() // t0's wait is decided: no registration is left
	assert.Empty(t, slotWaits(tag))
	_, ok = CondWaitOf(101)
	assert.False(t, ok)

	// The next wait of 101 takes the same slot again (t0 was notified),
	// with another Epoch.
	t1 := c.take()
	for t1%CondSlotCount != t0%CondSlotCount {
		c.notify() // tickets nobody holds
		t1 = c.take()
	}
	require.True(t, c.watch.Claim(101, t1, &c.nl))
	ci, ok = CondWaitOf(101)
	require.True(t, ok)
	assert.NotEqual(t, first, ci.Epoch)

	// Fill the other slots; a ticket whose own slot is taken goes to the
	// next free one, and with all taken, nowhere.
	gs := []int64{101}
	for len(gs) < CondSlotCount {
		g := int64(200 + len(gs))
		tk := c.take()
		if !c.watch.Claim(g, tk, &c.nl) {
			require.GreaterOrEqual(t, c.watch.ClaimOther(g, tk, &c.nl), 0)
		}
		gs = append(gs, g)
	}
	assert.Len(t, slotWaits(tag), CondSlotCount)
	tk := c.take()
	assert.False(t, c.watch.Claim(300, tk, &c.nl))
	assert.Equal(t, -1, c.watch.ClaimOther(300, tk, &c.nl))

	// A wait that gives up its ticket unnotified clears its slot, and the
	// slot is free again.
	t2 := uint32(t1 + 1)
	j := -1
	for i := range c.watch.w {
		if uint32(c.watch.w[i].Load()) == t2 {
			j = i
		}
	}
	require.GreaterOrEqual(t, j, 0)
	g2 := int64(c.watch.w[j].Load() >> 32)
	c.watch.Clear(j, g2, t2)
	_, ok = slotWaits(tag)[g2]
	assert.False(t, ok, "a ticket given up is no wait")
	k := int(tk % CondSlotCount)
	if !c.watch.Claim(300, tk, &c.nl) {
		k = c.watch.ClaimOther(300, tk, &c.nl)
	}
	assert.Equal(t, j, k, "the slot cleared is the one free")
	assert.Len(t, slotWaits(tag), CondSlotCount)

	for atomic.LoadUint32(&c.nl.Notify) != atomic.LoadUint32(&c.nl.Wait) {
		c.notify()
	}
	assert.Empty(t, slotWaits(tag), "every ticket notified")
	runtime.KeepAlive(c)
}

// TestCondSlotsCollected: the list of Conds holds them weakly: a Cond
// nothing else reaches is collected, and the next read forgets it, as
// does the next listing of a Cond once the list has grown enough.
func TestCondSlotsCollected(t *testing.T) {
	c, tag := newSlotCond(t)
	tk := c.take()
	require.True(t, c.watch.Claim(7, tk, &c.nl))
	require.Len(t, slotWaits(tag), 1)
	c = nil
	runtime.GC()
	runtime.GC()
	assert.Empty(t, slotWaits(tag))
	assert.False(t, listed(tag), "a collected Cond is forgotten by a read")

	_, tag = newSlotCond(t) // collectable at once
	runtime.GC()
	runtime.GC()
	require.True(t, listed(tag))
	condConds.mu.Lock()
	condConds.pruneAt = 0 // as if the list had doubled
	condConds.mu.Unlock()
	c2, tag2 := newSlotCond(t)
	assert.False(t, listed(tag), "a collected Cond is forgotten by a listing")
	assert.True(t, listed(tag2))
	runtime.KeepAlive(c2)
}
