package detect

// SetStuckPollHook makes f run after each look of an end-of-test or
// end-of-run check within its grace, until the returned function undoes
// it. f runs on the check's goroutine.
func SetStuckPollHook(f func()) (undo func()) {
	testHookStuckPoll = f
	return func() { testHookStuckPoll = nil }
}
