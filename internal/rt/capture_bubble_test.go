//go:build go1.25

package rt

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// captureBubble runs dump inside a synctest bubble whose goroutines are
// durably blocked in the states of capturedInBubble, and returns what
// dump returned.
func captureBubble(t *testing.T, dump func() []byte) []byte {
	var out []byte
	synctest.Test(t, func(t *testing.T) {
		block := make(chan struct{})
		send, slept := make(chan int), make(chan struct{})
		cond := sync.NewCond(new(sync.Mutex))
		var wg sync.WaitGroup
		wg.Add(1)
		go bubRecv(block)
		go bubSend(send)
		go bubSelect(block)
		go bubCond(cond, block)
		go bubWaitGroup(&wg)
		go bubSleep(slept)
		synctest.Wait()
		out = dump()
		close(block)
		<-send
		wg.Done()
		cond.L.Lock()
		cond.Broadcast()
		cond.L.Unlock()
		<-slept
	})
	return out
}

//go:noinline
func bubRecv(block chan struct{}) { <-block }

//go:noinline
func bubSend(ch chan int) { ch <- 1 }

//go:noinline
func bubSelect(block chan struct{}) {
	never := make(chan int)
	select {
	case <-never:
	case <-block:
	}
}

//go:noinline
func bubCond(c *sync.Cond, block chan struct{}) {
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
func bubWaitGroup(wg *sync.WaitGroup) { wg.Wait() }

//go:noinline
func bubSleep(done chan struct{}) {
	defer close(done)
	time.Sleep(time.Hour) // ended by the bubble's clock, once all else waits
}
