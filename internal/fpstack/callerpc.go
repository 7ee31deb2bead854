package fpstack

// CheapCallerPC returns pc(skip) where CallerPC is a walk of frame
// pointers (CheapCaller), else 0: not recorded, since runtime.Callers
// would cost an uncontended lock call more than the call itself. pc must
// be CallerPC, passed as a value so that, with CheapCallerPC inlined into
// its caller, CallerPC is called from that caller.
func CheapCallerPC(pc func(int) uintptr, skip int) uintptr {
	if CheapCaller {
		return pc(skip)
	}
	return 0
}
