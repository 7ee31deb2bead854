package deadlock_test

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/deadlock"
)

// liveness bounds every wait of these tests for something that must
// happen: generous, since it only matters when the test fails.
const liveness = 30 * time.Second

// harness is Opts set for one test, with OnPotentialDeadlock counting and
// LogBuf captured; Opts and the detector's configuration are restored
// when the test ends. The test must have joined every goroutine that
// locks by then.
type harness struct {
	hits atomic.Int32
	poke chan struct{} // buffered(1): OnPotentialDeadlock was called
	log  lockedBuffer
	// logged records, at each call of OnPotentialDeadlock, whether the
	// log had grown since the previous call: the report comes first.
	logged atomic.Bool
	lastN  atomic.Int64
}

func setup(t *testing.T, timeout time.Duration, order bool) *harness {
	t.Helper()
	saved := deadlock.Opts
	t.Cleanup(func() {
		deadlock.Unapply()
		deadlock.Opts = saved
	})
	h := &harness{poke: make(chan struct{}, 1)}
	h.logged.Store(true)
	deadlock.Opts.Disable = false
	deadlock.Opts.DisableLockOrderDetection = !order
	deadlock.Opts.DeadlockTimeout = timeout
	deadlock.Opts.LogBuf = &h.log
	deadlock.Opts.OnPotentialDeadlock = func() {
		n := int64(h.log.Len())
		if n <= h.lastN.Swap(n) {
			h.logged.Store(false)
		}
		h.hits.Add(1)
		select {
		case h.poke <- struct{}{}:
		default:
		}
	}
	return h
}

func (h *harness) count() int { return int(h.hits.Load()) }

// waitHits waits until OnPotentialDeadlock has been called n times.
func (h *harness) waitHits(t *testing.T, n int) {
	t.Helper()
	timer := time.NewTimer(liveness)
	defer timer.Stop()
	for h.count() < n {
		select {
		case <-h.poke:
		case <-timer.C:
			t.Fatalf("%d reports expected, got %d:\n%s", n, h.count(), h.log.String())
		}
	}
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *lockedBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

// onOther runs f on a goroutine of its own and returns what it panicked
// with, or nil.
func onOther(f func()) any {
	ch := make(chan any, 1)
	go func() {
		defer func() { ch <- recover() }()
		f()
	}()
	return <-ch
}

// proc is a goroutine started by spawn.
type proc struct {
	id   chan int64
	done chan any // what it panicked with, or nil
}

func spawn(f func()) *proc {
	p := &proc{id: make(chan int64, 1), done: make(chan any, 1)}
	go func() {
		defer func() { p.done <- recover() }()
		p.id <- goid()
		f()
	}()
	return p
}

func (p *proc) wait(t *testing.T) any {
	t.Helper()
	select {
	case v := <-p.done:
		return v
	case <-time.After(liveness):
		t.Fatal("goroutine did not finish")
		return nil
	}
}

// goid returns the calling goroutine's ID, from its stack's header.
func goid() int64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := strings.Fields(string(buf))
	id, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		panic(err)
	}
	return id
}

// waitBlocked waits until goroutine p is parked with frame on its stack.
func waitBlocked(t *testing.T, p *proc, frame string) {
	t.Helper()
	id := <-p.id
	p.id <- id
	head := fmt.Sprintf("goroutine %d [", id)
	deadline := time.Now().Add(liveness)
	for time.Now().Before(deadline) {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		for _, g := range strings.Split(string(buf), "\n\n") {
			if !strings.HasPrefix(g, head) {
				continue
			}
			state := g[len(head):strings.IndexByte(g, ']')]
			if !strings.HasPrefix(state, "running") && !strings.HasPrefix(state, "runnable") && strings.Contains(g, frame) {
				return
			}
		}
		time.Sleep(time.Millisecond) // polling the condition, not a guess at timing
	}
	t.Fatalf("goroutine %d never blocked in %s", id, frame)
}
