package nohelper

import (
	"testing"

	"example.com/bank"
)

func TestInversion(t *testing.T) { bank.BothWays() }

func TestClean(t *testing.T) { bank.OneWay() }
