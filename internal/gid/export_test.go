package gid

import "github.com/locksmith-go/locksmith/internal/rt"

var Parse = rt.GoroutineID
