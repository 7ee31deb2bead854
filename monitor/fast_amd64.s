//go:build gc && !race && !purego

#include "textflag.h"
#include "go_asm.h"
#include "../internal/gid/goid_amd64.h"

// func lock(m *Monitor)
//
// lockGo's fast paths, with a fast goroutine ID and Order mode off
// (fastWord not 0): if the word names the caller, add one to reentries
// (no atomic write: only the owner touches it); if the state word is 0,
// one CompareAndSwap from 0 to the caller's ID and nothing else
// (reentries is 0 already). Otherwise (held by another goroutine, or
// waiters), or if the CompareAndSwap fails, it tail-calls lockHeld,
// which goes straight to the slow path; without a fast ID or in Order
// mode, lockGo.
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
//
// Why the re-entry is the straight line and the first entry the jump: a
// pair is two calls of a few instructions each, and a taken branch in
// them costs about what the work does. The first entry's jump is hidden
// by its locked instruction; Unlock keeps its last release, the first
// entry's other half, in line (with both halves behind jumps a first
// entry cost 1.09-1.18x mutex.Mutex's pair while the machine was busy).
// PCALIGN: the function starts a cache line, and its re-entry path fits
// in that line (the linker aligns functions to 32 bytes only, so without
// it where the path falls depends on the code linked before it). In one
// process on an AMD EPYC, Zen 3, 2 cores (median of the per-round ratios
// of 40 interleaved rounds, each the best of 3 x 100,000 pairs; three
// runs), the re-entry pair against the floor lock's pair: re-entry
// behind a jump, 0.81-0.82x; in line, starting mid-line, 0.74-0.76x; in
// line and aligned, 0.69x. The first entry against mutex.Mutex's pair:
// 1.03-1.04x with the re-entry behind the jump, 1.02x with it in line
// and aligned.
TEXT ·lock(SB),NOSPLIT,$0-8
	PCALIGN $64
	MOVQ ·fastWord(SB), BX
	TESTQ BX, BX
	JEQ slow
	GOID(BX, CX)
	SHLQ $const_ownerShift, CX
	MOVQ m+0(FP), DX
	MOVQ (Monitor_l+const_stateOff)(DX), AX
	TESTQ AX, AX
	JEQ free
	ANDQ $~((1<<const_ownerShift)-1), AX
	CMPQ AX, CX
	JNE held
	CMPQ (Monitor_l+const_metaOff)(DX), $0
	JNE slow // a lock Dump can see: lockGo publishes the hold count
	INCQ Monitor_reentries(DX)
	RET
free:
	LOCK
	CMPXCHGQ CX, (Monitor_l+const_stateOff)(DX)
	JNE held
	RET
held:
	JMP ·lockHeld(SB)
slow:
	JMP ·lockGo(SB)

// func unlock(m *Monitor)
//
// unlockGo's fast paths. With one hold (reentries 0), one CompareAndSwap
// of the state word from the caller's ID (nobody waiting) to 0 releases m
// and is also the owner check. With more than one, the caller must be the
// state word's owner, and takes one from reentries. reentries is read
// before the owner is known; a non-owner's read acts on nothing: either
// its CompareAndSwap or its owner check fails. A failed CompareAndSwap
// tail-calls unlockHeld (waiters to wake, or a misuse to report);
// anything else unlockGo, which starts over.
TEXT ·unlock(SB),NOSPLIT,$0-8
	PCALIGN $64
	MOVQ ·fastWord(SB), BX
	TESTQ BX, BX
	JEQ slow
	GOID(BX, AX)
	SHLQ $const_ownerShift, AX
	MOVQ m+0(FP), DX
	CMPQ Monitor_reentries(DX), $0
	JNE more
	XORL BX, BX
	LOCK
	CMPXCHGQ BX, (Monitor_l+const_stateOff)(DX)
	JNE held
	RET
more:
	MOVQ (Monitor_l+const_stateOff)(DX), CX
	ANDQ $~((1<<const_ownerShift)-1), CX
	CMPQ CX, AX
	JNE slow
	CMPQ (Monitor_l+const_metaOff)(DX), $0
	JNE slow // a lock Dump can see: unlockGo publishes the hold count
	DECQ Monitor_reentries(DX)
	RET
held:
	JMP ·unlockHeld(SB)
slow:
	JMP ·unlockGo(SB)
