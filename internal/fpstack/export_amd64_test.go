//go:build gc && !purego

package fpstack

var RecordFrom = recordFrom
