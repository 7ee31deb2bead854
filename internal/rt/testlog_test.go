package rt_test

import (
	"testing"

	"github.com/locksmith-go/locksmith/internal/rt"
)

// TestTestBinary: this program is a test binary, as testing.Testing says.
// (detect's TestGoRunPrintsInversion checks a program that is not one.)
func TestTestBinary(t *testing.T) {
	if got, want := rt.TestBinary(), testing.Testing(); got != want {
		t.Fatalf("TestBinary() = %v, testing.Testing() = %v", got, want)
	}
}

func TestTestLogFile(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"-test.v", "-test.timeout=10m0s"}, ""},
		{[]string{"-test.paniconexit0", "-test.testlogfile=/tmp/b001/testlog.txt", "-test.timeout=10m0s"}, "/tmp/b001/testlog.txt"},
		{[]string{"--test.testlogfile=x"}, "x"},
		{[]string{"-test.testlogfile"}, ""},
	} {
		if got := rt.TestLogFile(tc.args); got != tc.want {
			t.Errorf("TestLogFile(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
