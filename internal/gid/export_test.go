package gid

var (
	Verify = verify
	Parse  = parse
)
