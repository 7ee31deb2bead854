package deadlock

// Unapply removes this package's detect.Configure call, so that a test
// leaves the detector's configuration as it found it.
var Unapply = unapply

// ErrDefaultAction is the panic value of the default OnPotentialDeadlock.
var ErrDefaultAction = errDefaultAction
