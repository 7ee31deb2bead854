package condvar_test

import (
	"context"
	"fmt"
	"time"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/mutex"
)

// WaitUntilTimeout is the loop a port writes around Java's awaitNanos or
// C#'s Monitor.Wait(o, t): it waits until the condition holds or the time
// is up, over one deadline however often it is woken, and returns the
// condition's last value.
func ExampleCond_WaitUntilTimeout() {
	var mu mutex.Mutex
	c := condvar.New(&mu)
	var queue []string // guarded by mu

	go func() {
		mu.Lock()
		queue = append(queue, "job")
		mu.Unlock()
		c.Signal()
	}()

	mu.Lock()
	fmt.Println(c.WaitUntilTimeout(time.Minute, func() bool { return len(queue) > 0 }), queue)
	queue = queue[1:]
	// Nothing else comes: false once the time is up, with mu held again.
	fmt.Println(c.WaitUntilTimeout(10*time.Millisecond, func() bool { return len(queue) > 0 }), mu.Owned())
	mu.Unlock()
	// Output:
	// true [job]
	// false true
}

// WaitWhileContext waits while a condition holds, until a context is done:
// a deadline the wait shares with other work, or a cancellation.
func ExampleCond_WaitWhileContext() {
	var mu mutex.Mutex
	c := condvar.New(&mu)
	busy := true // guarded by mu

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	mu.Lock()
	err := c.WaitWhileContext(ctx, func() bool { return busy })
	mu.Unlock()
	fmt.Println(err)
	// Output:
	// context deadline exceeded
}
