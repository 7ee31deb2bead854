//go:build gc && !race && !purego

#include "textflag.h"
#include "go_asm.h"
#include "../internal/rt/goid_amd64.h"

// func lock(m *Monitor)
//
// lockGo's fast paths, with a fast goroutine ID and Order mode off
// (fastWord not 0): if the word names the caller, add one to reentries
// (no atomic write: only the owner touches it); if the state word is 0,
// one CompareAndSwap from 0 to the caller's ID, then the holder's
// acquisition PC (core.Lock.SetHolderPC), the return address at 0(SP)
// in the caller that Lock is inlined into; reentries is 0 already. Otherwise (held by another goroutine, or
// waiters), or if the CompareAndSwap fails, it tail-calls lockHeld,
// which goes straight to the slow path. In Order mode with a fast ID
// (orderWord not 0), a free monitor is taken the same way, CompareAndSwap
// and PC, and lockOrdered forwards the first entry; anything else, and
// everything without a fast ID, goes to lockGo.
//
// Why test for 0 first: lockGo compares the owner first, which costs a
// first entry a mask, a compare and a branch before its CompareAndSwap;
// trying the CompareAndSwap first and reading the owner from a failure
// (LOCK CMPXCHGQ leaves the word in AX) makes a re-entry pay a locked
// instruction. Testing for 0 first costs neither. A held monitor costs no
// CompareAndSwap at all.
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
// last release, the first entry's other half, in line too. Of the
// layouts tried (the first entry behind the jump and the re-entry in
// line; the first entry in line and the re-entry straddling the line;
// this one), this one balances the two: its first entry comes about as
// close to mutex.Mutex's pair as the layout best for it, whose re-entry
// is dearer, and its re-entry stays well under the floor lock's pair,
// where the layout best for the re-entry costs the first entry most.
// Alternating processes of this command show it (the first entry against
// mutex.Mutex's pair, the re-entry against the floor lock's):
//
//	go run ./bench/cmd/lockbench -locks 'floor.GoidLock,mutex.Mutex/detect=cycles,monitor.Monitor/detect=cycles,monitor.Monitor.depth2/detect=cycles' -workload headline -goroutines 1 -rounds 21
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
	MOVQ 0(SP), AX // the return PC: Lock is inlined into its caller
	CMPQ AX, (Monitor_l+const_pcOff)(DX) // a lock retaken at its last site: no store
	JEQ samesite
	MOVQ AX, (Monitor_l+const_pcOff)(DX)
samesite:
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
	MOVQ ·orderWord(SB), BX
	TESTQ BX, BX
	JEQ gocode
	GOID(BX, CX)
	SHLQ $const_ownerShift, CX
	MOVQ m+0(FP), DX
	XORL AX, AX
	LOCK
	CMPXCHGQ CX, (Monitor_l+const_stateOff)(DX)
	JNE gocode // held (a re-entry, perhaps), or waiters: lockGo sorts it out
	MOVQ 0(SP), AX
	CMPQ AX, (Monitor_l+const_pcOff)(DX)
	JEQ ordered
	MOVQ AX, (Monitor_l+const_pcOff)(DX)
ordered:
	JMP ·lockOrdered(SB)
gocode:
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
// here is the next cache line, instead of across the line: that makes the
// re-entry pair cheaper and leaves the first entry as it was (lock's
// lockbench command above shows both).
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
