package rt

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv("LOCKSMITH_CAPTURE") != "" {
		os.Exit(m.Run()) // the capture leaves a sleeping goroutine behind
	}
	goleak.VerifyTestMain(m)
}
