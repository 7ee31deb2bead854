//go:build !purego

package condvar

// ticketPath reports whether untimed waits outside bubbles may park on a
// ticket of the runtime's notify list (see Cond.mu). Built with -tags
// purego, they queue a record as every other wait does.
const ticketPath = true
