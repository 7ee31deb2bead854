package core

func (l *Lock) enqueue(w *waiter, front bool) {
	w.inq = true
	if front {
		l.q.pushFront(w)
	} else {
		l.q.pushBack(w)
	}
}

// remove unlinks a queued waiter and drops the counts it added.
func (l *Lock) remove(w *waiter) {
	l.q.unlink(w)
	w.inq = false
	if w.durable {
		if l.ndurable--; l.ndurable == 0 {
			l.clearFlags(flagDurable)
		}
	}
	if l.q.head == nil {
		l.clearFlags(flagWaiting)
	}
}

// QueueLen returns the number of parked waiters (for tests and Dump).
func (l *Lock) QueueLen() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for w := l.q.head; w != nil; w = w.next {
		n++
	}
	return n
}

// waitList is a FIFO of queued waiters, linked through their prev and
// next fields: a Lock's waiters, and an RWLock's queued readers. Its
// owner guards it and keeps its own counts.
type waitList struct {
	head, tail *waiter
}

func (q *waitList) pushBack(w *waiter) {
	w.prev, w.next = q.tail, nil
	if q.tail == nil {
		q.head = w
	} else {
		q.tail.next = w
	}
	q.tail = w
}

func (q *waitList) pushFront(w *waiter) {
	w.prev, w.next = nil, q.head
	if q.head == nil {
		q.tail = w
	} else {
		q.head.prev = w
	}
	q.head = w
}

func (q *waitList) unlink(w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		q.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		q.tail = w.prev
	}
	w.prev, w.next = nil, nil
}
