package detectdiff_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// ownPrefix starts the names of this test package's functions, for
// detecttest.OwnFrame.
const ownPrefix = "github.com/locksmith-go/locksmith/bench/detectdiff_test."

// helperEnv, when set, makes TestHelperProcess act as a child process for
// the role named in it instead of skipping.
const helperEnv = "LOCKSMITH_DETECTDIFF_TEST_HELPER"

// runHelper runs this test binary again, running only TestHelperProcess
// with helperEnv=role, and returns its stdout and stderr.
func runHelper(t *testing.T, role string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Liveness)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	// The race detector's runtime sleeps a second at exit by default.
	cmd.Env = append(os.Environ(), helperEnv+"="+role, "GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	require.NoError(t, err, "child %s:\nstdout:\n%s\nstderr:\n%s", role, out.String(), errb.String())
	return out.String(), errb.String()
}

// TestHelperProcess is not a test: it is the child of runHelper.
func TestHelperProcess(t *testing.T) {
	role := os.Getenv(helperEnv)
	if role == "" {
		t.Skip("child process helper")
	}
	switch role {
	case "godeadlock-hidden-holder":
		goDeadlockHiddenHolderChild(t)
	default:
		t.Fatalf("unknown helper role %q", role)
	}
}

// lockPair takes a then b on the calling goroutine and releases both. It
// is this package's own function: the detector names a problem by its
// first frame outside the library, which a helper under internal/ is not.
func lockPair(a, b sync.Locker) {
	a.Lock()
	b.Lock()
	b.Unlock()
	a.Unlock()
}
