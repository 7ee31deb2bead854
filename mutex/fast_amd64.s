//go:build gc && !race && !purego

#include "textflag.h"
#include "go_asm.h"
#include "../internal/rt/goid_amd64.h"

// func lock(m *Mutex)
//
// lockGo's uncontended path: with a fast goroutine ID and Order mode off
// (fastWord not 0), one CompareAndSwap of the state word from 0 to the
// caller's ID, then the holder's acquisition PC (core.Lock.SetHolderPC):
// the return address at 0(SP), in the caller that Lock is inlined into,
// stored only when it differs from the one there, since a lock is mostly
// retaken at its last site and the unconditional store showed in
// lockbench's uncontended and nested pairs.
// If the CompareAndSwap fails it tail-calls lockHeld, which goes straight
// to the slow path. In Order mode with a fast ID (orderWord not 0) it
// makes the same CompareAndSwap and PC store, then tail-calls
// lockOrdered, which forwards the acquisition; without a fast ID, lockGo.
//
// PCALIGN: lock and unlock each start a cache line, as monitor's do (see
// monitor/fast_amd64.s), so that what a pair costs does not depend on
// where the linker, which aligns functions to 32 bytes, happens to put
// them. For mutex.Mutex the difference was within the noise.
TEXT ·lock(SB),NOSPLIT,$0-8
	PCALIGN $64
	MOVQ ·fastWord(SB), BX
	TESTQ BX, BX
	JEQ notfast
	GOID(BX, CX)
	SHLQ $const_ownerShift, CX
	MOVQ m+0(FP), DX
	XORL AX, AX
	LOCK
	CMPXCHGQ CX, (Mutex_l+const_stateOff)(DX)
	JNE held
	MOVQ 0(SP), AX // the return PC: Lock is inlined into its caller
	CMPQ AX, (Mutex_l+const_pcOff)(DX) // a lock retaken at its last site: no store
	JEQ samesite
	MOVQ AX, (Mutex_l+const_pcOff)(DX)
samesite:
	RET
held:
	JMP ·lockHeld(SB)
notfast:
	MOVQ ·orderWord(SB), BX
	TESTQ BX, BX
	JEQ slow
	GOID(BX, CX)
	SHLQ $const_ownerShift, CX
	MOVQ m+0(FP), DX
	XORL AX, AX
	LOCK
	CMPXCHGQ CX, (Mutex_l+const_stateOff)(DX)
	JNE held
	MOVQ 0(SP), AX
	CMPQ AX, (Mutex_l+const_pcOff)(DX)
	JEQ ordered
	MOVQ AX, (Mutex_l+const_pcOff)(DX)
ordered:
	JMP ·lockOrdered(SB)
slow:
	JMP ·lockGo(SB)

// func unlock(m *Mutex)
//
// unlockGo's uncontended path: one CompareAndSwap of the state word from
// the caller's ID (nobody waiting) to 0, which is also the owner check.
// If that fails it tail-calls unlockHeld (waiters to wake, or a misuse to
// report); without a fast ID or in Order mode, unlockGo.
TEXT ·unlock(SB),NOSPLIT,$0-8
	PCALIGN $64
	MOVQ ·fastWord(SB), BX
	TESTQ BX, BX
	JEQ slow
	GOID(BX, AX)
	SHLQ $const_ownerShift, AX
	MOVQ m+0(FP), DX
	XORL CX, CX
	LOCK
	CMPXCHGQ CX, (Mutex_l+const_stateOff)(DX)
	JNE held
	RET
held:
	JMP ·unlockHeld(SB)
slow:
	JMP ·unlockGo(SB)
