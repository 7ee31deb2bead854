package detect_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// ownPrefix starts the names of this test package's functions, for
// detecttest.OwnFrame.
const ownPrefix = "github.com/locksmith-go/locksmith/detect_test."
