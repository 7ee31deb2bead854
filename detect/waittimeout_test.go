package detect_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// TestWaitTimeoutInTestBinaries: in a test binary the wait timeout is on
// in Cycles mode as in Order mode, at DefaultTestWaitTimeout, well inside
// go test's default -timeout; WithWaitTimeout still decides, and Off has
// none.
func TestWaitTimeoutInTestBinaries(t *testing.T) {
	if _, set := os.LookupEnv(detect.WaitTimeoutEnvVar); set {
		t.Skipf("%s is set", detect.WaitTimeoutEnvVar)
	}
	require.Less(t, detect.DefaultTestWaitTimeout+detect.DefaultTestWaitTimeout/4, time.Minute,
		"reported before even a one-minute -timeout ends the binary")
	for _, tc := range []struct {
		opts []detect.Option
		want time.Duration
	}{
		{[]detect.Option{detect.WithMode(detect.Cycles)}, detect.DefaultTestWaitTimeout},
		{[]detect.Option{detect.WithMode(detect.Order)}, detect.DefaultTestWaitTimeout},
		{[]detect.Option{detect.WithMode(detect.Cycles), detect.WithWaitTimeout(time.Hour)}, time.Hour},
		{[]detect.Option{detect.WithMode(detect.Order), detect.WithWaitTimeout(0)}, 0},
		{[]detect.Option{detect.WithMode(detect.Off)}, 0},
	} {
		restore := detect.Configure(tc.opts...)
		got := detect.CurrentConfig().WaitTimeout
		restore()
		assert.Equal(t, tc.want, got, "%d options", len(tc.opts))
	}
}

// TestWaitTimeoutEnvVar: LOCKSMITH_WAIT_TIMEOUT is a Go duration, 0 for
// none; anything else stops the program at start-up with a panic naming
// the variable.
func TestWaitTimeoutEnvVar(t *testing.T) {
	for v, want := range map[string]time.Duration{"45s": 45 * time.Second, "2m": 2 * time.Minute, "0": 0, "1h30m": 90 * time.Minute} {
		t.Setenv(detect.WaitTimeoutEnvVar, v)
		d, set := detect.WaitFromEnv()
		assert.True(t, set, v)
		assert.Equal(t, want, d, v)
	}
	t.Setenv(detect.WaitTimeoutEnvVar, "")
	_, set := detect.WaitFromEnv()
	assert.False(t, set, "empty is unset")
	for _, v := range []string{"-1s", "30", "soon"} {
		t.Setenv(detect.WaitTimeoutEnvVar, v)
		p := testutil.Catch(func() { detect.WaitFromEnv() })
		require.NotNil(t, p, v)
		assert.Contains(t, p.(error).Error(), detect.WaitTimeoutEnvVar+"=", v)
	}
}
