//go:build go1.25

package core

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/gid"
)

// The detector's clock is real time inside a bubble too: a reading taken
// inside lies between readings taken outside just before and just after,
// however far the bubble's fake clock has moved.
func TestNowIsRealInsideBubble(t *testing.T) {
	before := Now()
	var inside int64
	synctest.Test(t, func(t *testing.T) {
		inside = Now()
	})
	after := Now()
	assert.LessOrEqual(t, before, inside)
	assert.LessOrEqual(t, inside, after)
}

// CurDomain tells goroutines outside bubbles from those of each bubble,
// and domainOf finds another goroutine's domain (through a dump of all
// goroutines when the cache does not know it).
func TestDomains(t *testing.T) {
	assert.Equal(t, DomOutside, CurDomain())
	var mu sync.Mutex
	var doms []Domain
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			synctest.Test(t, func(t *testing.T) {
				d := CurDomain()
				assert.True(t, d.Bubble(), "domain %d", d)
				assert.Equal(t, d, CurDomain(), "stable")
				ch := make(chan int64)
				block := make(chan struct{})
				go func() {
					ch <- gid.Get()
					<-block
				}()
				g := <-ch
				synctest.Wait()
				// g has never asked: the cache cannot know it.
				assert.Equal(t, d, domainOf(g), "another goroutine of the bubble")
				mu.Lock()
				doms = append(doms, d)
				mu.Unlock()
				close(block)
			})
		})
	}
	wg.Wait()
	require.Len(t, doms, 2)
	assert.NotEqual(t, doms[0], doms[1], "two bubbles, two domains")
}

func TestHeaderDomain(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   Domain
	}{
		{"goroutine 7 [running, synctest bubble 3]:\nmain.f()", 4},
		{"goroutine 7 [chan receive (durable), 2 minutes, synctest bubble 12]:", 13},
		// Go 1.26's GODEBUG=tracebacklabels=1 prints labels last in the
		// bracket, and a label may read like a field.
		{`goroutine 7 [select, synctest bubble 1 labels:{"k": ", synctest bubble 9"}]:`, 2},
		{`goroutine 7 [select labels:{"k": ", synctest bubble 9]:"}]:`, DomUnknown},
		{"goroutine 7 [running]:", DomUnknown},
		{"goroutine 7 [running, synctest bubble x]:", DomUnknown},
		{"goroutine 7 [running, synctest bubble 99999999]:", DomUnknown},
	} {
		assert.Equal(t, tc.want, headerDomain([]byte(tc.header)), tc.header)
	}
}

// A dump names every goroutine's domain, but only a goroutine shown in a
// bubble and parked in an ordinary wait is cached: one shown outside may
// be a goroutine of a bubble that the runtime detached for a moment (to
// start or assist a garbage collection), a running or runnable one may be
// running another bubble's timer, and the caller of synctest.Test is
// counted in the bubble only while it waits for the bubble (parked, or
// runnable with internal/synctest.Run on its stack).
func TestFillFromDump(t *testing.T) {
	const a, b, root, root2, run, gc = 1 << 39, 1<<39 + 1, 1<<39 + 2, 1<<39 + 3, 1<<39 + 4, 1<<39 + 5 // IDs no real goroutine has
	dump := "goroutine 549755813888 [chan receive]:\nmain.f()\n\n" +
		"goroutine 549755813889 [sync.Cond.Wait (durable), synctest bubble 5]:\nmain.g()\n\n" +
		"goroutine 549755813890 [synctest.Run (durable), synctest bubble 5]:\nmain.h()\n\n" +
		"goroutine 549755813891 [runnable, synctest bubble 5]:\ninternal/synctest.Run(0xc000114180)\n" +
		"\t/usr/local/go/src/runtime/synctest.go:251 +0x2f4\ntesting/synctest.Test(0xc00012ad88, 0xc000110528)\n\n" +
		"goroutine 549755813892 [running, synctest bubble 5]:\nmain.i()\n\n" +
		"goroutine 549755813893 [GC assist wait]:\nmain.j()\n"
	assert.Equal(t, Domain(6), fillFromDump([]byte(dump), b))
	d, ok := cachedDomain(b)
	assert.True(t, ok)
	assert.Equal(t, Domain(6), d)
	assert.Equal(t, DomOutside, fillFromDump([]byte(dump), a))
	_, ok = cachedDomain(a)
	assert.False(t, ok, "a goroutine shown outside bubbles is not cached")
	assert.Equal(t, Domain(6), fillFromDump([]byte(dump), run), "reported, not cached")
	_, ok = cachedDomain(run)
	assert.False(t, ok, "a running goroutine is not cached")
	assert.Equal(t, DomOutside, fillFromDump([]byte(dump), gc))
	_, ok = cachedDomain(gc)
	assert.False(t, ok, "a goroutine assisting the GC is not cached")
	for _, g := range []int64{root, root2} {
		assert.Equal(t, Domain(6), fillFromDump([]byte(dump), g))
		_, ok = cachedDomain(g)
		assert.False(t, ok, "the caller of synctest.Test is not cached")
	}
	assert.Equal(t, DomUnknown, fillFromDump([]byte(dump), 3), "a goroutine not in the dump")
}

// TestFillFromDumpLabels: with GODEBUG=tracebacklabels=1, a goroutine
// outside bubbles whose label reads like a bubble field is outside, and
// is not cached.
func TestFillFromDumpLabels(t *testing.T) {
	const g = 1<<39 + 6
	dump := `goroutine 549755813894 [chan receive labels:{"k": ", synctest bubble 9]:", "j": "x, synctest bubble 9"}]:` + "\nmain.f()\n\t/src/main.go:3 +0x1\n"
	assert.Equal(t, DomOutside, fillFromDump([]byte(dump), g))
	_, ok := cachedDomain(g)
	assert.False(t, ok)
}

// The runtime detaches a goroutine from its bubble while it starts a
// garbage collection, and a dump taken then shows it outside any bubble.
// That answer must not be cached: the goroutine's own CurDomain would then
// say outside, and its waits would park on channels of its bubble as if
// it were outside, to be woken from other domains (a fatal error) or
// left durably blocked behind a holder of another domain.
func TestDomainOfGoroutineStartingGC(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		want := CurDomain()
		var stop atomic.Bool
		ids := make(chan int64)
		done := make(chan struct{})
		go func() {
			defer close(done)
			ids <- gid.Get()
			for !stop.Load() {
				runtime.GC()
			}
		}()
		g := <-ids
		defer func() {
			stop.Store(true)
			<-done
		}()
		slot := &domCache[uint64(g)%domCacheSize]
		for range 500 {
			slot.Store(0) // make domainOf dump
			domainOf(g)
			if d, ok := cachedDomain(g); ok && d != want {
				t.Fatalf("goroutine %d of domain %d cached as %d", g, want, d)
			}
		}
	})
}

func TestDomainString(t *testing.T) {
	for d, want := range map[Domain]string{
		0:          "no domain",
		DomOutside: "no bubble",
		2:          "bubble 1",
		80:         "bubble 79",
		DomUnknown: "an unknown bubble",
		DomMixed:   "several domains",
	} {
		if got := d.String(); got != want {
			t.Errorf("Domain(%d).String() = %q, want %q", uint64(d), got, want)
		}
	}
}

// TestCheckWakerNamesBothSides: the check that stands in for the
// runtime's fatal error names the waiter, the waker, their domains and
// what the waiter parked behind, and leaves the lock usable.
func TestCheckWakerNamesBothSides(t *testing.T) {
	var l Lock
	w := &waiter{g: 12345, lock: &l, dom: 438, durable: true, durHolder: 777, durHolderDom: 438, durState: 777 << ownerShift}
	defer func() {
		msg, _ := recover().(string)
		for _, want := range []string{
			"wakeup of goroutine 12345, durably blocked in synctest bubble 437",
			"by goroutine " + strconv.FormatInt(gid.Get(), 10) + " in no bubble",
			"behind holder 777, cached as bubble 437",
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("message %q lacks %q", msg, want)
			}
		}
		if !l.mu.TryLock() {
			t.Fatal("the lock's queue mutex is left held")
		}
		l.mu.Unlock()
	}()
	w.checkWaker()
	t.Fatal("checkWaker did not panic")
}
