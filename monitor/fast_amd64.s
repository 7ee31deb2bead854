//go:build gc && !race && !purego

#include "textflag.h"
#include "go_asm.h"
#include "../internal/rt/goid_amd64.h"

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
// Why the first entry is the straight line and the re-entry the jump,
// starting a 32-byte block of its own: a pair is two calls of a few
// instructions each, and a taken branch or a path that straddles a
// fetch block costs about what the work does. PCALIGN $64 starts the
// function on a cache line (the linker aligns functions to 32 bytes
// only, so without it where the paths fall depends on the code linked
// before it); the first entry, from the ID read to its RET, fits in that
// line's first 50 bytes, and PCALIGN $32 puts the re-entry at the start
// of the next line instead of across the boundary. Unlock keeps its
// last release, the first entry's other half, in line too. Measured in
// alternating processes on an AMD EPYC, Zen 3, 2 cores, Go 1.26.8 (each
// the median of 21 per-round ratios, 1,000,000 pairs a round: go run
// ./bench/cmd/lockbench -locks 'floor.GoidLock,mutex.Mutex/detect=cycles,
// monitor.Monitor/detect=cycles,monitor.Monitor.depth2/detect=cycles'
// -workload headline -goroutines 1 -rounds 21), first entry against
// mutex.Mutex's pair and re-entry against the floor lock's pair: the
// first entry behind the jump and the re-entry in line, 1.12-1.18x and
// 0.68-0.70x (1.02x in one process of 11, where mutex.Mutex itself ran
// slow); the first entry in line and the re-entry behind the jump,
// straddling the line, 1.06-1.10x and 0.75-0.82x; as here, 1.07-1.13x
// (median 1.09x, 6 processes of 7 at or under 1.10x) and 0.72-0.77x.
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
	JNE notfree
	LOCK
	CMPXCHGQ CX, (Monitor_l+const_stateOff)(DX)
	JNE held
	RET
	PCALIGN $32
notfree:
	ANDQ $~((1<<const_ownerShift)-1), AX
	CMPQ AX, CX
	JNE held
	CMPQ (Monitor_l+const_metaOff)(DX), $0
	JNE slow // a lock Dump can see: lockGo publishes the hold count
	INCQ Monitor_reentries(DX)
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
//
// As in lock, the last release is in line and the re-entry behind the
// jump; PCALIGN $16 starts the re-entry on the next 16-byte block, which
// here is the next cache line, instead of across the line. Alternating
// quiet processes on the AMD EPYC (7 each, lock's command above): the
// re-entry pair against the floor lock's, 0.66-0.75x (median 0.74x)
// across the line, 0.61-0.71x (median 0.66x) aligned; the first entry
// unchanged within the noise (Monitor/Mutex medians 1.10x and 1.06x).
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
	PCALIGN $16
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
