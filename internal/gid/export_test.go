package gid

import "github.com/locksmith-go/locksmith/internal/rt"

var (
	Verify = verify
	Parse  = rt.GoroutineID
)
