//go:build gc

package gid

var Locate = locate
