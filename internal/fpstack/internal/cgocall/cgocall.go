//go:build cgo

package cgocall

/*
extern void goCallback(void);

static void viaC(int depth) {
	if (depth > 0) {
		viaC(depth - 1);
		return;
	}
	goCallback();
}
*/
import "C"

var callback func()

// Through calls f from C, two C frames below the Go caller.
func Through(f func()) {
	callback = f
	defer func() { callback = nil }()
	C.viaC(2)
}

//export goCallback
func goCallback() { callback() }
