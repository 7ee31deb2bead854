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

// both runs f and g in goroutines and waits for them.
func both(fs ...func()) {
	done := make(chan struct{}, len(fs))
	for _, f := range fs {
		go func(f func()) {
			defer func() { done <- struct{}{} }()
			f()
		}(f)
	}
	for range fs {
		<-done
	}
}
