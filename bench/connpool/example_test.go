package connpool_test

import (
	"context"
	"fmt"
	"time"

	"github.com/locksmith-go/locksmith/bench/connpool"
)

func ExamplePool() {
	dialed := 0
	p := connpool.New(connpool.Config[string]{
		Capacity: 2,
		Dial: func(context.Context) (string, error) {
			dialed++ // Dial runs without the pool's lock, but here one goroutine dials
			return fmt.Sprintf("conn-%d", dialed), nil
		},
		Close: func(c string) { fmt.Println("closed", c) },
	})
	defer p.Close()

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c, err := p.Acquire(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("using", c.Value())
	p.Release(c) // back to the pool for reuse

	c, _ = p.Acquire(ctx)
	fmt.Println("using", c.Value(), "again")
	p.Remove(c) // broken: close it and free its place

	c, _ = p.AcquireTimeout(100 * time.Millisecond)
	fmt.Println("using", c.Value())
	p.Release(c)
	// Output:
	// using conn-1
	// using conn-1 again
	// closed conn-1
	// using conn-2
	// closed conn-2
}
