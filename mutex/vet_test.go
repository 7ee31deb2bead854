package mutex_test

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVetReportsCopies runs go vet on testdata/copyvet, which copies a
// Mutex, a Monitor, a Cond, an RWMutex and an RWMonitor by value: the
// copylocks check must report each, since a copied lock would silently
// split its state.
func TestVetReportsCopies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go vet")
	}
	// go test puts its own GOROOT/bin first on the PATH, so "go" is the
	// toolchain running the test. runtime.GOROOT, used before, is empty in
	// a test binary built with -trimpath, and the test then failed.
	out, err := exec.Command("go", "vet", "./testdata/copyvet").CombinedOutput()
	require.Error(t, err, "go vet must fail on copied locks:\n%s", out)
	for _, want := range []string{
		"passes lock by value: github.com/locksmith-go/locksmith/mutex.Mutex",
		"return copies lock value: github.com/locksmith-go/locksmith/monitor.Monitor",
		"return copies lock value: github.com/locksmith-go/locksmith/condvar.Cond",
		"passes lock by value: github.com/locksmith-go/locksmith/mutex.RWMutex",
		"return copies lock value: github.com/locksmith-go/locksmith/monitor.RWMonitor",
	} {
		assert.Contains(t, string(out), want)
	}
}
