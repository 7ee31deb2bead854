//go:build cgo

package cgotest

/*
#include <pthread.h>

extern void goCallback(int);

static void* cthreadRun(void* arg) {
	int n = (int)(long)arg;
	for (int i = 0; i < n; i++) {
		goCallback(i);
	}
	return 0;
}

// cthread runs n callbacks into Go, one after another, on a new C thread,
// and returns once the thread has exited.
static int cthread(int n) {
	pthread_t t;
	if (pthread_create(&t, 0, cthreadRun, (void*)(long)n) != 0) {
		return -1;
	}
	return pthread_join(t, 0);
}
*/
import "C"

import (
	"fmt"
	"sync"
)

var (
	callbackMu sync.Mutex // serializes OnCThread
	callbacks  []func()   // guarded by callbackMu; run by goCallback
)

// OnCThread runs each of fs, in order, in a callback into Go from one new
// C thread, and returns once the thread has exited.
func OnCThread(fs ...func()) {
	callbackMu.Lock()
	defer callbackMu.Unlock()
	callbacks = fs
	defer func() { callbacks = nil }()
	if rc := C.cthread(C.int(len(fs))); rc != 0 {
		panic(fmt.Sprintf("cgotest: pthread_create or pthread_join failed: %d", rc))
	}
}

//export goCallback
func goCallback(i C.int) { callbacks[i]() } // OnCThread, blocked in C, holds callbackMu
