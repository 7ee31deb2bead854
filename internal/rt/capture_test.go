package rt

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"
)

// The capture: LOCKSMITH_CAPTURE=1 go test -run '^TestCapture$' ./internal/rt
// makes goroutines in the states the library reads from dumps and writes
// a dump of all goroutines to testdata/goX.Y.txt (and, from Go 1.26 on,
// one with GODEBUG=tracebacklabels=1 to testdata/goX.Y-labels.txt). Run it
// with each supported release, GOTOOLCHAIN=go1.24.13 and so on, and
// commit the dumps: the tests of the parser read every one.
//
// Each goroutine runs a function of its own, so that the tests find it by
// its frames: capture's expected lists which state each one shows.

// captured names the capture's goroutines by function, with the state
// (base, see baseState) and flags their headers must show.
var captured = []struct {
	fn     string
	state  string
	locked bool
	bubble bool
}{
	{"capSend", "chan send", false, false},
	{"capRecv", "chan receive", false, false},
	{"capSelect", "select", false, false},
	{"capMutex", "sync.Mutex.Lock", false, false},
	{"capRLock", "sync.RWMutex.RLock", false, false},
	{"capCond", "sync.Cond.Wait", false, false},
	{"capWaitGroup", "sync.WaitGroup.Wait", false, false},
	{"capSleep", "sleep", false, false},
	{"capLocked", "chan receive", true, false},
	{"capLabelled", "chan receive", false, false},
}

// capturedInBubble are the goroutines of the bubble, from Go 1.25 on.
var capturedInBubble = []struct{ fn, state string }{
	{"bubRecv", "chan receive (durable)"},
	{"bubSend", "chan send (durable)"},
	{"bubSelect", "select (durable)"},
	{"bubCond", "sync.Cond.Wait"},
	{"bubWaitGroup", "sync.WaitGroup.Wait (durable)"},
	{"bubSleep", "sleep"},
}

const capturePkg = "github.com/locksmith-go/locksmith/internal/rt."

// A nasty label: what the header of a goroutine outside bubbles shows
// with GODEBUG=tracebacklabels=1.
const nastyLabel = ", synctest bubble 9]:"

func TestCapture(t *testing.T) {
	if os.Getenv("LOCKSMITH_CAPTURE") == "" {
		t.Skip("set LOCKSMITH_CAPTURE=1 to capture this release's dumps into testdata")
	}
	release := runtime.Version()
	if i := strings.LastIndexByte(release, '.'); strings.Count(release, ".") == 2 {
		release = release[:i]
	}
	var mu sync.Mutex
	var rw sync.RWMutex
	cond := sync.NewCond(new(sync.Mutex))
	var wg sync.WaitGroup
	block := make(chan struct{})
	never, send := make(chan int), make(chan int)
	mu.Lock()
	rw.Lock()
	wg.Add(1)
	var started sync.WaitGroup
	for _, f := range []func(){
		func() { capSend(send) },
		func() { capRecv(block) },
		func() { capSelect(never, block) },
		func() { capMutex(&mu) },
		func() { capRLock(&rw) },
		func() { capCond(cond, block) },
		func() { capWaitGroup(&wg) },
		func() { capSleep() },
		func() { capLocked(block) },
		func() {
			ctx := pprof.WithLabels(context.Background(), pprof.Labels("k", nastyLabel))
			pprof.SetGoroutineLabels(ctx)
			capLabelled(block)
		},
	} {
		started.Add(1)
		go func() {
			started.Done()
			f()
		}()
	}
	started.Wait()
	waitFor(t, captured[len(captured)-1].fn)
	dump := captureBubble(t, func() []byte {
		for _, c := range captured {
			waitFor(t, c.fn)
		}
		return allStacks()
	})
	write(t, release+".txt", dump)
	if runtime.Version() >= "go1.26" {
		t.Setenv("GODEBUG", "tracebacklabels=1")
		write(t, release+"-labels.txt", allStacks())
	}
	close(block)
	<-send
	mu.Unlock()
	rw.Unlock()
	wg.Done()
	cond.L.Lock()
	cond.Broadcast()
	cond.L.Unlock()
}

// waitFor returns once the goroutine running fn is parked in its wait.
func waitFor(t *testing.T, fn string) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for sc := Goroutines(allStacks()); sc.Next(); {
			h, s := sc.Header, sc.Stack
			if s.HasFrame(capturePkg+fn) && h.State != "running" && h.State != "runnable" {
				return
			}
		}
		runtime.Gosched()
	}
	t.Fatalf("%s did not park", fn)
}

func allStacks() []byte {
	buf := make([]byte, 1<<20)
	return buf[:runtime.Stack(buf, true)]
}

// write writes dump to testdata/name with the paths of this machine
// replaced by /locksmith (the module) and /goroot.
func write(t *testing.T, name string, dump []byte) {
	_, here, _, _ := runtime.Caller(0)
	module := filepath.Dir(filepath.Dir(filepath.Dir(here)))
	goroot, _, _ := strings.Cut(funcFile(runtime.Gosched), "/src/runtime/")
	dump = bytes.ReplaceAll(dump, []byte(module+"/"), []byte("/locksmith/"))
	dump = bytes.ReplaceAll(dump, []byte(goroot+"/"), []byte("/goroot/"))
	head := "# runtime.Stack(all) of " + runtime.Version() + ", by capture_test.go\n\n"
	if err := os.WriteFile(filepath.Join("testdata", name), append([]byte(head), dump...), 0o644); err != nil {
		t.Fatal(err)
	}
}

func funcFile(f any) string {
	file, _ := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).FileLine(reflect.ValueOf(f).Pointer())
	return file
}

// The goroutines of the capture, outside bubbles. capSleep's never
// returns: the capture leaves it behind.

//go:noinline
func capSend(ch chan int) { ch <- 1 }

//go:noinline
func capRecv(block chan struct{}) { <-block }

//go:noinline
func capSelect(never chan int, block chan struct{}) {
	select {
	case <-never:
	case <-block:
	}
}

//go:noinline
func capMutex(mu *sync.Mutex) {
	mu.Lock()
	mu.Unlock()
}

//go:noinline
func capRLock(rw *sync.RWMutex) {
	rw.RLock()
	rw.RUnlock()
}

//go:noinline
func capCond(c *sync.Cond, block chan struct{}) {
	c.L.Lock()
	defer c.L.Unlock()
	for {
		select {
		case <-block:
			return
		default:
		}
		c.Wait()
	}
}

//go:noinline
func capWaitGroup(wg *sync.WaitGroup) { wg.Wait() }

//go:noinline
func capSleep() { time.Sleep(time.Hour) }

//go:noinline
func capLocked(block chan struct{}) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	<-block
}

//go:noinline
func capLabelled(block chan struct{}) { <-block }
