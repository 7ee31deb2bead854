package misuse_test

import (
	"errors"
	"fmt"

	"github.com/locksmith-go/locksmith/misuse"
	"github.com/locksmith-go/locksmith/mutex"
)

// A misuse panics with a *misuse.Error: errors.Is matches its sentinel
// under any package's name for it, and errors.As reads its fields.
func ExampleError() {
	var mu mutex.Mutex
	defer func() {
		err, _ := recover().(error)
		var me *misuse.Error
		if errors.As(err, &me) {
			fmt.Println(me.Err == mutex.ErrNotOwner, errors.Is(err, misuse.ErrNotOwner))
			fmt.Println(me.Goroutine > 0)
		}
	}()
	mu.Unlock() // not locked: a broken contract
	// Output:
	// true true
	// true
}
