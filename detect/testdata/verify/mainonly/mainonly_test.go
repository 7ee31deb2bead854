package mainonly

import (
	"testing"

	"example.com/bank"
	"github.com/locksmith-go/locksmith/detect"
)

func TestMain(m *testing.M) { detect.VerifyTestMain(m) }

func TestInversion(t *testing.T) { bank.BothWays() }

func TestClean(t *testing.T) { bank.OneWay() }
