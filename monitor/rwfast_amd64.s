//go:build gc && !race && !purego

#include "textflag.h"
#include "go_asm.h"
#include "../internal/rt/goid_amd64.h"

// Fields of the core.RWLock inside an RWMonitor.
#define STATE (RWMonitor_l+const_rwStateOff)
#define PC (RWMonitor_l+const_rwPCOff)
#define META (RWMonitor_l+const_rwMetaOff)
#define RS (RWMonitor_l+const_rwRsOff)
#define SLOTS (RWMonitor_l+const_rwSlotsOff)
#define HOLDS (RWMonitor_l+const_rwHoldsOff)
#define RPCS (RWMonitor_l+const_rwReaderPCsOff)

// func rwRLock(rw *RWMonitor)
//
// If the caller's home slot (its ID mod 8) holds its ID, add a read hold
// (ReenterRead). If the slot is free, the state word rs is 0 but for the
// displaced count (the caller not displaced) and no writer holds the
// writer lock, claim it as package mutex's rwRLock does (one
// CompareAndSwap, then the writer looked at again; rwRLockRetreat if one
// came in). Anything else, before any write, goes to rwRLockGo: a slot
// taken by another reader, the caller displaced (a re-entry outside the
// home slot), a reader in the overflow map, a writer (the
// caller itself, taking a read hold, included), a queue.
TEXT ·rwRLock(SB),NOSPLIT,$0-8
	MOVQ ·fastWord(SB), BX
	TESTQ BX, BX
	JEQ slow
	GOID(BX, CX)
	MOVQ rw+0(FP), DX
	MOVQ CX, SI
	ANDQ $const_rwSlotMask, SI
	MOVQ SLOTS(DX)(SI*8), AX
	CMPQ AX, CX
	JEQ reenter
	TESTQ AX, AX
	JNE slow
	MOVQ RS(DX), AX
	TESTQ AX, AX
	JNE displaced
claim:
	MOVQ STATE(DX), AX
	SHRQ $const_ownerShift, AX
	TESTQ AX, AX
	JNE slow
	XORL AX, AX
	LOCK
	CMPXCHGQ CX, SLOTS(DX)(SI*8)
	JNE slow
	MOVL $1, HOLDS(DX)(SI*4)
	MOVQ STATE(DX), AX
	SHRQ $const_ownerShift, AX
	TESTQ AX, AX
	JNE retreat
	// The reader's site (core.RWLock.SetReaderPC): RLock is inlined into
	// its caller. Stored only when it differs, as the writer's is.
	MOVQ 0(SP), AX
	CMPQ AX, RPCS(DX)(SI*8)
	JEQ done
	MOVQ AX, RPCS(DX)(SI*8)
done:
	RET
reenter:
	INCL HOLDS(DX)(SI*4)
	RET
displaced:
	// Readers displaced from their home slot, and nothing else in rs:
	// the caller may be one of them (the slow path's business), else it
	// may claim its home slot as usual.
	TESTQ $(const_rwReadersWaiting|const_rwDraining), AX
	JNE slow
	SHRQ $const_rwOverflowShift, AX
	TESTQ AX, AX
	JNE slow
	CMPQ (SLOTS+0)(DX), CX
	JEQ slow
	CMPQ (SLOTS+8)(DX), CX
	JEQ slow
	CMPQ (SLOTS+16)(DX), CX
	JEQ slow
	CMPQ (SLOTS+24)(DX), CX
	JEQ slow
	CMPQ (SLOTS+32)(DX), CX
	JEQ slow
	CMPQ (SLOTS+40)(DX), CX
	JEQ slow
	CMPQ (SLOTS+48)(DX), CX
	JEQ slow
	CMPQ (SLOTS+56)(DX), CX
	JEQ slow
	JMP claim
retreat:
	JMP ·rwRLockRetreat(SB)
slow:
	JMP ·rwRLockGo(SB)

// func rwRUnlock(rw *RWMonitor)
//
// If the caller's home slot holds its ID: with more than one hold, take
// one away (no atomic write); with one, free the slot with an exchange
// and look at the draining flag, as package mutex's rwRUnlock does
// (rwRUnlockWake wakes a draining writer). Anything else goes to
// rwRUnlockGo.
TEXT ·rwRUnlock(SB),NOSPLIT,$0-8
	MOVQ ·fastWord(SB), BX
	TESTQ BX, BX
	JEQ slow
	GOID(BX, CX)
	MOVQ rw+0(FP), DX
	MOVQ CX, SI
	ANDQ $const_rwSlotMask, SI
	CMPQ SLOTS(DX)(SI*8), CX
	JNE slow
	MOVL HOLDS(DX)(SI*4), AX
	CMPL AX, $1
	JNE more
	XORL AX, AX
	XCHGQ AX, SLOTS(DX)(SI*8)
	TESTQ $const_rwDraining, RS(DX)
	JNE wake
	RET
more:
	JLT slow // not reached: a slot's reader has a hold
	DECL HOLDS(DX)(SI*4)
	RET
wake:
	JMP ·rwRUnlockWake(SB)
slow:
	JMP ·rwRUnlockGo(SB)

// func rwLock(rw *RWMonitor)
//
// If the writer lock is free (state word 0), one CompareAndSwap takes it,
// then the eight slots and the overflow count must be 0 (package mutex's
// rwLock); write holds = 1. If the state word names the caller, add a
// write hold (no atomic write; a lock that Dump can see goes to rwLockGo,
// which publishes the count). Held by another goroutine, writers queued,
// or a failed CompareAndSwap: rwLockHeld; readers in: rwLockReaders.
TEXT ·rwLock(SB),NOSPLIT,$0-8
	MOVQ ·fastWord(SB), BX
	TESTQ BX, BX
	JEQ slow
	GOID(BX, CX)
	SHLQ $const_ownerShift, CX
	MOVQ rw+0(FP), DX
	MOVQ STATE(DX), AX
	TESTQ AX, AX
	JNE taken
	LOCK
	CMPXCHGQ CX, STATE(DX)
	JNE held
	MOVQ (SLOTS+0)(DX), AX
	ORQ (SLOTS+8)(DX), AX
	ORQ (SLOTS+16)(DX), AX
	ORQ (SLOTS+24)(DX), AX
	ORQ (SLOTS+32)(DX), AX
	ORQ (SLOTS+40)(DX), AX
	ORQ (SLOTS+48)(DX), AX
	ORQ (SLOTS+56)(DX), AX
	MOVQ RS(DX), BX
	SHRQ $const_rwOverflowShift, BX
	ORQ BX, AX
	JNE readers
	MOVQ $1, RWMonitor_wholds(DX)
	MOVQ 0(SP), AX // the writer's site (core.RWLock.SetWriterPC): Lock is inlined into its caller
	MOVQ AX, PC(DX)
	RET
taken:
	ANDQ $~((1<<const_ownerShift)-1), AX
	CMPQ AX, CX
	JNE held
	CMPQ META(DX), $0
	JNE slow
	INCQ RWMonitor_wholds(DX)
	RET
readers:
	JMP ·rwLockReaders(SB)
held:
	JMP ·rwLockHeld(SB)
slow:
	JMP ·rwLockGo(SB)

// func rwUnlock(rw *RWMonitor)
//
// The caller must be the state word's owner. With more than one write
// hold, take one away (a lock that Dump can see goes to rwUnlockGo). With
// one and no reader queued, one CompareAndSwap from the caller's ID to 0
// releases the writer lock, then a look for a reader that queued
// meanwhile (rwUnlockWake), as package mutex's rwUnlock does; write
// holds are left at 1, which nobody reads while the caller is not the
// writer (the next writer sets them). A failed CompareAndSwap (writers
// queued) goes to rwUnlockHeld; anything else to rwUnlockGo.
TEXT ·rwUnlock(SB),NOSPLIT,$0-8
	MOVQ ·fastWord(SB), BX
	TESTQ BX, BX
	JEQ slow
	GOID(BX, CX)
	SHLQ $const_ownerShift, CX
	MOVQ rw+0(FP), DX
	MOVQ STATE(DX), AX
	ANDQ $~((1<<const_ownerShift)-1), AX
	CMPQ AX, CX
	JNE slow
	MOVQ RWMonitor_wholds(DX), BX
	CMPQ BX, $1
	JNE more
	TESTQ $const_rwReadersWaiting, RS(DX)
	JNE slow
	MOVQ CX, AX
	XORL BX, BX
	LOCK
	CMPXCHGQ BX, STATE(DX)
	JNE held
	TESTQ $const_rwReadersWaiting, RS(DX)
	JNE wake
	RET
more:
	JLT slow // not reached: the writer has a hold
	CMPQ META(DX), $0
	JNE slow
	DECQ RWMonitor_wholds(DX)
	RET
wake:
	JMP ·rwUnlockWake(SB)
held:
	JMP ·rwUnlockHeld(SB)
slow:
	JMP ·rwUnlockGo(SB)
