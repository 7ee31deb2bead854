//go:build go1.23

package compat

func (x *Uint32) Or(mask uint32) (old uint32)  { return x.Uint32.Or(mask) }
func (x *Uint32) And(mask uint32) (old uint32) { return x.Uint32.And(mask) }
func (x *Uint64) Or(mask uint64) (old uint64)  { return x.Uint64.Or(mask) }
func (x *Uint64) And(mask uint64) (old uint64) { return x.Uint64.And(mask) }
func (x *Int32) Or(mask int32) (old int32)     { return x.Int32.Or(mask) }
func (x *Int32) And(mask int32) (old int32)    { return x.Int32.And(mask) }
func (x *Int64) Or(mask int64) (old int64)     { return x.Int64.Or(mask) }
func (x *Int64) And(mask int64) (old int64)    { return x.Int64.And(mask) }
