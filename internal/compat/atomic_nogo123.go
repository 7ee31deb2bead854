//go:build !go1.23

package compat

// Before go1.23, compare-and-swap loops; each swaps even when the value
// stays the same, so that it is a write as sync/atomic's Or and And are.

func (x *Uint32) Or(mask uint32) (old uint32) {
	for {
		if old = x.Load(); x.CompareAndSwap(old, old|mask) {
			return old
		}
	}
}

func (x *Uint32) And(mask uint32) (old uint32) {
	for {
		if old = x.Load(); x.CompareAndSwap(old, old&mask) {
			return old
		}
	}
}

func (x *Uint64) Or(mask uint64) (old uint64) {
	for {
		if old = x.Load(); x.CompareAndSwap(old, old|mask) {
			return old
		}
	}
}

func (x *Uint64) And(mask uint64) (old uint64) {
	for {
		if old = x.Load(); x.CompareAndSwap(old, old&mask) {
			return old
		}
	}
}

func (x *Int32) Or(mask int32) (old int32) {
	for {
		if old = x.Load(); x.CompareAndSwap(old, old|mask) {
			return old
		}
	}
}

func (x *Int32) And(mask int32) (old int32) {
	for {
		if old = x.Load(); x.CompareAndSwap(old, old&mask) {
			return old
		}
	}
}

func (x *Int64) Or(mask int64) (old int64) {
	for {
		if old = x.Load(); x.CompareAndSwap(old, old|mask) {
			return old
		}
	}
}

func (x *Int64) And(mask int64) (old int64) {
	for {
		if old = x.Load(); x.CompareAndSwap(old, old&mask) {
			return old
		}
	}
}
