package chunked

// BlockLen is how many entries a block holds.
const BlockLen = blockLen

// Blocks returns how many blocks l has allocated.
func (l *List[T]) Blocks() int { return len(l.blocks) }
