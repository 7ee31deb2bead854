package rt

import (
	"bytes"
	"strconv"
)

// The parser of runtime.Stack text, the library's only one. What it reads
// is what runtime/traceback.go writes (goroutineheader, traceback1,
// printcreatedby1), which no API promises; testdata/ holds dumps captured
// from each supported Go release (see capture_test.go), and the tests
// parse every one. A goroutine's text is its header line, then two lines
// per frame (the function with its arguments, then a tab, file:line and
// the PC's offset), then a "created by" pair, blocks separated by a
// blank line:
//
//	goroutine 7 [chan receive, 3 minutes, locked to thread, synctest bubble 2]:
//	main.f(0x1, ...)
//		/path/main.go:12 +0x45
//	created by main.main in goroutine 1
//		/path/main.go:20 +0x6c
//
// runtime.Stack writes at traceback level 1 whatever GOTRACEBACK says,
// but a crash's traceback at GOTRACEBACK=system has " gp=0x... m=N
// mp=0x..." before the bracket and " fp=... sp=... pc=..." after the
// offset, which the parser takes too. With GODEBUG=tracebacklabels=1 (Go 1.26) the bracket ends with
// ` labels:{"k": "v", ...}`, whose keys and values are quoted but may hold
// any printable character, brackets and ", synctest bubble 9" included.
// So the bracket's fields are read in the order goroutineheader writes
// them, and the labels, which come last, are never searched for fields.

// Header is what a goroutine header says.
type Header struct {
	ID int64
	// State is the goroutine's status or wait reason with its suffixes,
	// as printed: "running", "chan receive (durable)", "sleep (scan)".
	State   string
	Minutes int64  // how long it has waited, in whole minutes, if 1 or more
	Locked  bool   // locked to its thread
	Bubble  uint64 // the synctest bubble ID (Go 1.25 on), or 0 outside bubbles
	// Group is the ID of the root goroutine of the synctest group it runs
	// in, as Go 1.24's GOEXPERIMENT=synctest prints it, or 0.
	Group int64
}

// Frame is one call of a goroutine's stack.
type Frame struct {
	Function string // "main.f", "(*T).M", "panic"; without the arguments
	File     string
	Line     int
}

// Created is the "created by" line of a goroutine's stack.
type Created struct {
	Frame
	// By is the ID of the goroutine that ran the go statement (Go 1.21
	// on), or 0.
	By int64
}

// GoroutineID reads N from the start of b, "goroutine N ...": all that a
// truncated header needs to hold.
func GoroutineID(b []byte) (int64, bool) {
	const prefix = "goroutine "
	if !bytes.HasPrefix(b, []byte(prefix)) {
		return 0, false
	}
	var id int64 // parsed by hand: strconv would allocate the string
	digits := 0
	for _, c := range b[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		if id > (1<<63-1-int64(c-'0'))/10 {
			return 0, false // overflows int64
		}
		id = id*10 + int64(c-'0')
		digits++
	}
	if digits == 0 || id <= 0 {
		return 0, false
	}
	return id, true
}

// ParseHeader parses a goroutine header line (with or without its
// newline), as runtime/traceback.go's goroutineheader writes it.
func ParseHeader(line []byte) (Header, bool) {
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	var h Header
	id, ok := GoroutineID(line)
	if !ok {
		return h, false
	}
	h.ID = id
	open := bytes.Index(line, []byte(" ["))
	if open < 0 {
		return h, false
	}
	// Between the ID and the bracket only " gp=... m=... mp=..." may come,
	// which holds no bracket.
	list := line[open+2:]
	if i := bytes.Index(list, []byte(" labels:{")); i >= 0 {
		list = list[:i] // the first: no field before the labels holds it
	} else if bytes.HasSuffix(list, []byte("]:")) {
		list = list[:len(list)-2]
	} else {
		return h, false
	}
	first := true
	for len(list) > 0 || first {
		field := list
		if i := bytes.Index(list, []byte(", ")); i >= 0 {
			field, list = list[:i], list[i+2:]
		} else {
			list = nil
		}
		if first {
			if len(field) == 0 {
				return h, false
			}
			h.State, first = string(field), false
			continue
		}
		switch {
		case bytes.Equal(field, []byte("locked to thread")):
			h.Locked = true
		case bytes.HasSuffix(field, []byte(" minutes")):
			h.Minutes, _ = strconv.ParseInt(string(field[:len(field)-len(" minutes")]), 10, 64)
		case bytes.HasPrefix(field, []byte("synctest bubble ")):
			h.Bubble, _ = strconv.ParseUint(string(field[len("synctest bubble "):]), 10, 64)
		case bytes.HasPrefix(field, []byte("synctest group ")):
			h.Group, _ = strconv.ParseInt(string(field[len("synctest group "):]), 10, 64)
		}
	}
	return h, true
}

// Stack is the text of one goroutine's frames in a dump: the lines after
// its header.
type Stack []byte

// Goroutines returns a scanner over the goroutines of dump, a
// runtime.Stack text of one goroutine or all, in order: each Next moves
// to the next one, whose header and text of frames are then in Header
// and Stack. Blocks that do not start with a goroutine header are
// skipped.
//
//	for gs := rt.Goroutines(dump); gs.Next(); {
//		h, stack := gs.Header, gs.Stack
//		...
//	}
func Goroutines(dump []byte) Scanner { return Scanner{rest: dump} }

// Scanner walks the goroutines of a dump (see Goroutines).
type Scanner struct {
	rest   []byte // the text after the current goroutine
	Header Header // the current goroutine's header
	Stack  Stack  // the current goroutine's frames
}

// Next moves to the next goroutine of the dump and reports whether there
// is one.
func (sc *Scanner) Next() bool {
	for len(sc.rest) > 0 {
		block := sc.rest
		if i := bytes.Index(sc.rest, []byte("\n\n")); i >= 0 {
			block, sc.rest = sc.rest[:i], sc.rest[i+2:]
		} else {
			sc.rest = nil
		}
		line, rest := block, []byte(nil)
		if i := bytes.IndexByte(block, '\n'); i >= 0 {
			line, rest = block[:i], block[i+1:]
		}
		if h, ok := ParseHeader(line); ok {
			sc.Header, sc.Stack = h, Stack(rest)
			return true
		}
	}
	sc.Header, sc.Stack = Header{}, nil
	return false
}

// Frames returns the calls of s, innermost first, and its "created by"
// line (Function "" for a goroutine that has none: the main goroutine,
// or a runtime.Stack buffer cut short). Lines that are neither, such as
// "...additional frames elided...", are skipped.
func (s Stack) Frames() (frames []Frame, created Created) {
	for len(s) > 0 {
		fn, loc := s.next(), []byte(nil)
		if len(s) > 0 && s[0] == '\t' {
			loc = s.next()
		}
		if loc == nil {
			continue
		}
		if c, ok := bytes.CutPrefix(fn, []byte("created by ")); ok {
			if i := bytes.Index(c, []byte(" in goroutine ")); i >= 0 {
				created.By, _ = strconv.ParseInt(string(c[i+len(" in goroutine "):]), 10, 64)
				c = c[:i]
			}
			created.Frame = frame(c, loc)
			return frames, created
		}
		if p := bytes.LastIndexByte(fn, '('); p > 0 {
			fn = fn[:p]
		}
		frames = append(frames, frame(fn, loc))
	}
	return frames, created
}

// next returns s's first line, without its newline, and moves s past it.
func (s *Stack) next() []byte {
	line := []byte(*s)
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		*s = (*s)[i+1:]
		return line[:i]
	}
	*s = nil
	return line
}

// frame makes a Frame of a function name and a location line
// ("\t/path/file.go:12 +0x45 fp=... sp=... pc=...").
func frame(fn, loc []byte) Frame {
	loc = bytes.TrimLeft(loc, "\t")
	if p := bytes.LastIndex(loc, []byte(" +0x")); p > 0 {
		loc = loc[:p] // the PC's offset, then GOTRACEBACK=system's fp, sp, pc
	}
	f := Frame{Function: string(fn), File: string(loc)}
	if p := bytes.LastIndexByte(loc, ':'); p > 0 {
		if n, err := strconv.Atoi(string(loc[p+1:])); err == nil {
			f.File, f.Line = string(loc[:p]), n
		}
	}
	return f
}

// HasFrame reports whether s has a call of function fn (without
// arguments), not counting its "created by" line, without building its
// frames.
func (s Stack) HasFrame(fn string) bool {
	for len(s) > 0 {
		line := s.next()
		if len(line) == 0 || line[0] == '\t' {
			continue
		}
		if bytes.HasPrefix(line, []byte("created by ")) {
			return false
		}
		if p := bytes.LastIndexByte(line, '('); p > 0 && string(line[:p]) == fn {
			return true
		}
	}
	return false
}
