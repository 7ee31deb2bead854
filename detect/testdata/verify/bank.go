// Package bank is the fixture of detect's TestGoTestVerify: Transfer locks
// its two accounts in argument order, so Transfer(a, b) and Transfer(b, a)
// make a lock-order inversion.
package bank

import "github.com/locksmith-go/locksmith/mutex"

type Account struct {
	mu      mutex.Mutex
	balance int
}

func Transfer(from, to *Account, n int) {
	from.mu.Lock()
	defer from.mu.Unlock()
	to.mu.Lock()
	defer to.mu.Unlock()
	from.balance -= n
	to.balance += n
}

// BothWays makes the inversion: one transfer each way, one after the
// other. No run of it hangs, but another interleaving can.
func BothWays() {
	a, b := &Account{balance: 100}, &Account{balance: 100}
	Transfer(a, b, 30)
	Transfer(b, a, 10)
}

// OneWay transfers one way only: nothing to find.
func OneWay() {
	a, b := &Account{balance: 100}, &Account{balance: 100}
	Transfer(a, b, 30)
	Transfer(a, b, 10)
}
