//go:build !race

package core

// Outside race builds the registries' race-detector rules (racehb_race.go)
// cost nothing: these are empty and the registry's table is a map.

// RaceHide and RaceShow bracket synchronization that the race detector
// must not see (see racehb_race.go).
func RaceHide() {}
func RaceShow() {}

func raceReleaseMeta(m *Meta) {}
func raceAcquireMeta(m *Meta) {}
func raceMadeMeta(m *Meta)    {}

// RaceAcquireMeta orders the caller after m's maker in race builds.
func RaceAcquireMeta(m *Meta)   {}
func raceReleaseTag(t *CondTag) {}
func raceAcquireTag(t *CondTag) {}

// table is one shard's registered waits, by goroutine ID.
type table struct{ m map[int64]entry }

func (t *table) get(g int64) (entry, bool) {
	e, ok := t.m[g]
	return e, ok
}

// reserve makes room for a put of a new entry.
func (t *table) reserve() {
	if t.m == nil {
		t.m = make(map[int64]entry)
	}
}

// put stores g's entry: a new one after reserve.
func (t *table) put(g int64, e entry) { t.m[g] = e }

func (t *table) del(g int64) { delete(t.m, g) }

func (t *table) len() int { return len(t.m) }

// each calls f for every entry, storing the entry f returns if it says so.
func (t *table) each(f func(g int64, e entry) (entry, bool)) {
	for g, e := range t.m {
		if ne, ok := f(g, e); ok {
			t.m[g] = ne
		}
	}
}

// metaRace is what a Meta carries for the race detector's rules: nothing
// outside race builds.
//
//lint:ignore U1000 an empty stand-in for racehb_race.go's fields
type metaRace struct{}

// addMeta registers a new lock's Meta.
func addMeta(m *Meta) {
	metas.mu.Lock()
	metas.all.Append(metaEntry{m.lock, m})
	metas.mu.Unlock()
}

// drainMetas moves the Metas addMeta left aside into the registry's
// list, under metas.mu: none outside race builds.
func drainMetas() {}

// addCondCond lists a Cond for the watchdog's reads of its CondSlots.
func addCondCond(e condCond) {
	condConds.mu.Lock()
	pruneCondConds()
	condConds.all = append(condConds.all, e)
	condConds.mu.Unlock()
}

// drainCondConds moves the Conds addCondCond left aside into the list,
// under condConds.mu: none outside race builds.
func drainCondConds() {}
