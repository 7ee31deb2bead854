package mutex_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
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
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goTool, "vet", "./testdata/copyvet").CombinedOutput()
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
