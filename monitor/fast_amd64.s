//go:build gc && !race && !purego

#include "textflag.h"
#include "go_asm.h"
#include "../internal/gid/goid_amd64.h"

// func lock(m *Monitor)
//
// lockGo's fast paths, with a fast goroutine ID and Order mode off
// (fastWord not 0): if the state word is 0, one CompareAndSwap from 0 to
// the caller's ID, then holds = 1; if the word names the caller, add a
// hold (no atomic write: only the owner touches holds). Otherwise (held by
// another goroutine, or waiters), or if the CompareAndSwap fails, it
// tail-calls lockHeld, which goes straight to the slow path; without a
// fast ID or in Order mode, lockGo.
//
// Why test for 0 first: lockGo compares the owner first, which costs a
// first entry a mask, a compare and a branch before its CompareAndSwap;
// trying the CompareAndSwap first and reading the owner from a failure
// (LOCK CMPXCHGQ leaves the word in AX) makes a re-entry pay a locked
// instruction. In one process on an AMD EPYC (minimum of 301 interleaved
// rounds of 100,000 pairs), owner first: first entry 6.0-6.1 ns, re-entry
// 4.5; CompareAndSwap first: 5.9 and 4.6; zero first: 5.9 and 4.5
// (mutex.Mutex 5.7-5.8 ns, the floor lock 6.2-6.3 ns). A held monitor
// costs no CompareAndSwap at all.
TEXT ·lock(SB),NOSPLIT,$0-8
	MOVQ ·fastWord(SB), BX
	TESTQ BX, BX
	JEQ slow
	GOID(BX, CX)
	SHLQ $const_ownerShift, CX
	MOVQ m+0(FP), DX
	MOVQ (Monitor_l+const_stateOff)(DX), AX
	TESTQ AX, AX
	JNE taken
	LOCK
	CMPXCHGQ CX, (Monitor_l+const_stateOff)(DX)
	JNE held
	MOVQ $1, Monitor_holds(DX)
	RET
taken:
	ANDQ $~((1<<const_ownerShift)-1), AX
	CMPQ AX, CX
	JNE held
	CMPQ (Monitor_l+const_metaOff)(DX), $0
	JNE slow // a lock Dump can see: lockGo publishes the hold count
	INCQ Monitor_holds(DX)
	RET
held:
	JMP ·lockHeld(SB)
slow:
	JMP ·lockGo(SB)

// func unlock(m *Monitor)
//
// unlockGo's fast paths. With one hold, one CompareAndSwap of the state
// word from the caller's ID (nobody waiting) to 0 releases m and is also
// the owner check; holds is left at 1, which no one reads while m is free
// (the next owner sets it). With more than one, the caller must be the
// state word's owner, and takes one hold away. The hold count is read
// before the owner is known; a non-owner's read acts on nothing: either
// its CompareAndSwap or its owner check fails. A failed CompareAndSwap
// tail-calls unlockHeld (waiters to wake, or a misuse to report); anything
// else unlockGo, which starts over.
TEXT ·unlock(SB),NOSPLIT,$0-8
	MOVQ ·fastWord(SB), BX
	TESTQ BX, BX
	JEQ slow
	GOID(BX, CX)
	SHLQ $const_ownerShift, CX
	MOVQ m+0(FP), DX
	MOVQ Monitor_holds(DX), BX
	CMPQ BX, $1
	JNE more
	MOVQ CX, AX
	XORL BX, BX
	LOCK
	CMPXCHGQ BX, (Monitor_l+const_stateOff)(DX)
	JNE held
	RET
more:
	MOVQ (Monitor_l+const_stateOff)(DX), AX
	ANDQ $~((1<<const_ownerShift)-1), AX
	CMPQ AX, CX
	JNE slow
	CMPQ (Monitor_l+const_metaOff)(DX), $0
	JNE slow // a lock Dump can see: unlockGo publishes the hold count
	DECQ BX
	MOVQ BX, Monitor_holds(DX)
	RET
held:
	JMP ·unlockHeld(SB)
slow:
	JMP ·unlockGo(SB)
