package shapes

import (
	"os"
	"testing"

	"github.com/locksmith-go/locksmith/detect"
)

// helper calls detect.VerifyNone(t) when the driver asks for it.
func helper(t *testing.T) {
	if os.Getenv("CATALOG_VERIFY") == "1" {
		detect.VerifyNone(t)
	}
}

// both runs each of fs in a goroutine of its own and waits for them. A
// goroutine that panics does not count as done, so the test cannot
// return, and the binary exit, before the panic is printed.
func both(fs ...func()) {
	done := make(chan struct{}, len(fs))
	for _, f := range fs {
		go func(f func()) {
			f()
			done <- struct{}{}
		}(f)
	}
	for range fs {
		<-done
	}
}
