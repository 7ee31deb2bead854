package monitor_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/detect"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(detect.Checked(m)) }
