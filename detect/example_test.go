package detect_test

import (
	"fmt"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/mutex"
)

// Order mode reports a lock-order inversion from a run that did not hang:
// here one goroutine takes a then b, and later b then a.
func Example_lockOrder() {
	defer detect.Configure(
		detect.WithMode(detect.Order),
		detect.WithReporter(func(r *detect.Report) {
			last := r.Steps[len(r.Steps)-1]
			fmt.Printf("%v: %s was taken while holding %s, against the order seen before\n",
				r.Kind, last.WaitsFor.Name, last.Holds.Name)
		}),
	)()
	var a, b mutex.Mutex
	detect.SetName(&a, "a")
	detect.SetName(&b, "b")

	a.Lock()
	b.Lock() // records a < b
	b.Unlock()
	a.Unlock()

	b.Lock()
	a.Lock() // contradicts a < b: reported, and the program goes on
	a.Unlock()
	b.Unlock()
	fmt.Println("done")
	// Output:
	// lock order: a was taken while holding b, against the order seen before
	// done
}

// Configure returns a function that restores the previous configuration,
// which suits tests.
func ExampleConfigure() {
	before := detect.CurrentMode()
	restore := detect.Configure(detect.WithMode(detect.Off))
	fmt.Println(detect.CurrentMode())
	restore()
	fmt.Println(detect.CurrentMode() == before)
	// Output:
	// off
	// true
}
