package locktest

import (
	"testing"

	"github.com/locksmith-go/locksmith/detect"
)

// ForEachMode runs f once per detection mode, restoring the configuration
// after. The wait-timeout watchdog is kept off.
func ForEachMode(t *testing.T, f func(t *testing.T)) {
	for _, m := range []detect.Mode{detect.Off, detect.Cycles, detect.Order} {
		t.Run("detect="+m.String(), func(t *testing.T) {
			defer detect.Configure(detect.WithMode(m), detect.WithWaitTimeout(0))()
			f(t)
		})
	}
}

// ForEachModeQuiet is ForEachMode for code that must never be reported:
// any detector report fails the test.
func ForEachModeQuiet(t *testing.T, f func(t *testing.T)) {
	for _, m := range []detect.Mode{detect.Off, detect.Cycles, detect.Order} {
		t.Run(m.String(), func(t *testing.T) {
			defer detect.Configure(detect.WithMode(m), detect.WithWaitTimeout(0), detect.WithReporter(func(r *detect.Report) {
				t.Errorf("unexpected detector report:\n%s", r)
			}))()
			f(t)
		})
	}
}
