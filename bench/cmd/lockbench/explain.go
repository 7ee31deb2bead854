package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/locksmith-go/locksmith/bench"
)

// What lockbench says of itself: the plan it prints before measuring
// (what each section measures, what one of its runs is, and about how
// long it takes), and the closing summary of the text output, which
// answers the question the benchmarks exist for: what reentrancy and
// owner checks cost beside sync.Mutex and the floor lock.

// wrapWidth is the width explanation lines are wrapped to: the terminal's
// as the shell exports it in COLUMNS, else 100.
func wrapWidth() int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n >= 40 {
		return n
	}
	return 100
}

// wrap breaks s into lines of at most width runes at spaces (a word
// longer than width has a line of its own), the lines after the first
// indented by indent.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	lead := s[:len(s)-len(strings.TrimLeft(s, " "))]
	b.WriteString(lead)
	col := len(lead)
	for i, w := range strings.Fields(s) {
		n := len([]rune(w))
		switch {
		case i == 0:
		case col+1+n > width:
			b.WriteString("\n" + indent)
			col = len(indent)
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += n
	}
	return b.String()
}

// planned is a section as the planning pass sees it: its title, what one
// of its runs is, how many runs it makes and about how long they take.
type planned struct {
	title, run string
	runs       int
	est        time.Duration
}

// probePairs is how many pairs costOf times per lock: a few milliseconds
// for go-deadlock, the slowest.
const probePairs = 2000

// costOf returns about what one uncontended pair of l costs here,
// measured once per lock with probePairs pairs.
func (p *progress) costOf(l bench.Lock) time.Duration {
	if !p.planning {
		return 0
	}
	key := fmt.Sprint(l.Name, l.RW())
	if c, ok := p.costs[key]; ok {
		return c
	}
	restore := l.Configure()
	var r bench.Result
	if l.RW() {
		r = bench.ReadPairs(l, probePairs)
	} else {
		r = bench.Pairs(l, probePairs)
	}
	restore()
	c := r.Wall / probePairs
	if p.costs == nil {
		p.costs = map[string]time.Duration{}
	}
	p.costs[key] = c
	return c
}

// contendedOp returns about what one contended critical section costs
// here besides the lock's own pair: the work inside and outside it, and
// the handoffs between goroutines, from a probe of 2,000 critical
// sections of sync.Mutex shared by two goroutines (at least the work
// itself).
func (p *progress) contendedOp(cfg config, inside, outside bench.Work) time.Duration {
	if !p.planning {
		return 0
	}
	if p.contended == 0 {
		const n = 2000
		ld := bench.Load{Goroutines: 2, Ops: n, Inside: inside, Outside: outside}
		r, err := bench.Contended(bench.Locks()[0], ld)
		p.contended = max(r.Wall/n, cfg.inside+cfg.outside)
		if err != nil {
			p.contended = cfg.inside + cfg.outside
		}
	}
	return p.contended
}

// perRun is what a run costs besides its operations: the runtime.GC
// before it, goroutines started and stopped.
const perRun = time.Millisecond

// printPlan writes the plan: the sections in order, each with its runs
// and estimate, what a run is, and the total.
func printPlan(w io.Writer, cfg config, secs []planned) {
	width := wrapWidth()
	var total time.Duration
	for _, s := range secs {
		total += s.est
	}
	fmt.Fprintln(w, wrap(fmt.Sprintf("lockbench: %d section%s, each %d warm-up round%s and %d counted; "+
		"a round measures every lock once, in turn. About %s in all, estimated from a %s-pair probe of each lock: "+
		"a busy machine takes longer, and the progress lines correct the estimate as sections finish. "+
		"The results print when the last section is done; for steadier figures raise -rounds; -quiet silences this.",
		len(secs), plural(len(secs)), cfg.warmup, plural(cfg.warmup), cfg.rounds, about(total), count(probePairs)), width, "  "))
	for i, s := range secs {
		fmt.Fprintln(w, wrap(fmt.Sprintf("  %d. %s: %d runs, about %s.", i+1, s.title, s.runs, about(s.est)), width, "     "))
	}
}

// about rounds d for an estimate.
func about(d time.Duration) string {
	switch {
	case d < 10*time.Second:
		return fmt.Sprintf("%.0f s", max(1, d.Seconds()))
	case d < 2*time.Minute:
		return fmt.Sprintf("%.0f s", 5*float64(int(d.Seconds()/5+0.5)))
	default:
		return fmt.Sprintf("%.0f min", d.Minutes())
	}
}

// summary returns the closing lines of the text output: what reentrancy
// and owner checks cost here, against sync.Mutex and the floor lock, as
// paired CPU-time ratios with their interquartile range, and what the
// locks keep of sync.Mutex's throughput under contention. It reads the
// report only (rows and targets), so a report read back with -from has
// the same summary. With no uncontended table it returns nil.
func summary(rep *report) []string {
	var pairs, contended *section
	for _, s := range rep.Sections {
		switch s.Kind {
		case kindPairs:
			pairs = s
		case kindContended:
			contended = s
		}
	}
	if pairs == nil {
		return nil
	}
	mode := "cycles"
	if rowOfLock(pairs, "mutex.Mutex/detect=cycles", 0) == nil {
		mode = "off"
	}
	over := fmt.Sprintf("over %d round%s", rep.Rounds, plural(rep.Rounds))
	ratio := func(r *ratioStat, what string) string {
		if r == nil || r.Median == 0 {
			return ""
		}
		return fmt.Sprintf("%.2fx %s (IQR %.2f–%.2f)", r.Median, what, r.Q1, r.Q3)
	}
	var lines []string
	add := func(s string) { lines = append(lines, s) }
	mu := rowOfLock(pairs, "mutex.Mutex/detect="+mode, 0)
	mo := rowOfLock(pairs, "monitor.Monitor/detect="+mode, 0)
	re := rowOfLock(pairs, "monitor.Monitor.depth2/detect="+mode, 0)
	floor := floorRow(pairs)
	base := rowOfLock(pairs, bench.Locks()[0].Name, 0)
	add(fmt.Sprintf("Summary: CPU time per uncontended pair, locksmith in detect=%s, medians of the per-round ratios with their IQR %s. "+
		"In Ruby a Monitor costs about 2.1x a Mutex per million pairs; here:", mode, over))
	for _, tg := range rep.Targets {
		if strings.HasPrefix(tg.Question, "`monitor.Monitor` vs `mutex.Mutex`") && mu != nil && mo != nil {
			add(fmt.Sprintf("  Reentrancy: a monitor.Monitor costs %s at first entry (%s against %s ms per million pairs)",
				ratio(&tg.Ratio, "a mutex.Mutex"), ms(mo), ms(mu)) + reEntry(re, ratio) + ".")
		}
	}
	if mu != nil {
		s := "  Owner checks: a mutex.Mutex costs " + ratio(mu.CPURatio, "a sync.Mutex")
		if f := ratio(mu.FloorCPURatio, "the floor lock"); f != "" {
			s += " and " + f
		}
		add(s + ".")
	}
	if floor != nil && base != nil {
		add(fmt.Sprintf("  The floor lock (%s: the least an owner check costs here) costs %s; sync.Mutex takes %s ms per million pairs.",
			bench.FloorName, ratio(floor.CPURatio, "a sync.Mutex"), ms(base)))
	}
	if contended != nil {
		var locks []string
		for _, name := range []string{"mutex.Mutex/detect=" + mode, "monitor.Monitor/detect=" + mode} {
			var gs []string
			for _, r := range contended.Rows {
				if r.Lock == name && r.Goroutines >= 2 && r.Ratio != nil && r.Ratio.Median > 0 {
					gs = append(gs, fmt.Sprintf("%.2fx at %d", r.Ratio.Median, r.Goroutines))
				}
			}
			if len(gs) > 0 {
				locks = append(locks, name+" "+strings.Join(gs, ", ")+" goroutines")
			}
		}
		if len(locks) > 0 {
			add("  Contended, throughput against sync.Mutex: " + strings.Join(locks, "; ") + ".")
		}
	}
	return lines
}

// reEntry is the summary's clause on a Monitor re-entry, or "".
func reEntry(re *row, ratio func(*ratioStat, string) string) string {
	if re == nil {
		return ""
	}
	s := ratio(re.FloorCPURatio, "the floor lock's pair")
	if s == "" {
		s = ratio(re.CPURatio, "a sync.Mutex pair")
	}
	return "; a re-entry by its owner costs " + s
}

// ms is a row's median CPU time per pair in ns, which is ms per million
// pairs.
func ms(r *row) string { return ns(r.CPUNsPerOp.Median) }

// rowOfLock returns sec's row of the lock name at g goroutines, or nil.
func rowOfLock(sec *section, name string, g int) *row {
	for _, r := range sec.Rows {
		if r.Lock == name && r.Goroutines == g {
			return r
		}
	}
	return nil
}
