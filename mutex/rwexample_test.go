package mutex_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/locksmith-go/locksmith/mutex"
)

// A read lock taken again by the goroutine that holds it: sync.RWMutex
// hangs there only when a writer arrives in between; an RWMutex panics on
// every run.
func ExampleRWMutex() {
	var (
		mu    mutex.RWMutex
		table = map[string]int{"a": 1, "b": 2} // guarded by mu
	)
	get := func(k string) int {
		mu.RLock()
		defer mu.RUnlock()
		return table[k]
	}
	sum := func() (n int, err error) {
		mu.RLock()
		defer mu.RUnlock()
		defer func() {
			if v := recover(); v != nil {
				err = v.(error)
			}
		}()
		return get("a") + get("b"), nil // get read-locks again
	}
	_, err := sum()
	fmt.Println(errors.Is(err, mutex.ErrRecursiveLock))
	fmt.Println(strings.Contains(err.Error(), "recursive read locking"))
	fmt.Println(mu.Readers(), mu.Locked())
	// Output:
	// true
	// true
	// 0 false
}
