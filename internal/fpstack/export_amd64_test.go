//go:build gc && !purego && go1.23

package fpstack

var RecordFrom = recordFrom
