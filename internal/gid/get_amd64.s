//go:build gc

#include "textflag.h"

// func Get() int64
//
// The fast path is two loads: the current g from thread-local storage and
// its goid field at offset, which init found and verified. With offset 0
// (not verified) it tail-calls Slow.
TEXT ·Get(SB),NOSPLIT,$0-8
	MOVQ ·offset(SB), BX
	TESTQ BX, BX
	JEQ slow
	MOVQ (TLS), AX
	MOVQ (AX)(BX*1), AX
	MOVQ AX, ret+0(FP)
	RET
slow:
	JMP ·Slow(SB)

// func getg() unsafe.Pointer
TEXT ·getg(SB),NOSPLIT,$0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET
