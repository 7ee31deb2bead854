package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

const (
	exitOK    = 0
	exitError = 1 // a step failed, or a converted suite failed
	exitUsage = 2 // bad flags
)

// libraryModule is the module the rewritten projects are pointed at.
const libraryModule = "github.com/locksmith-go/locksmith"

// project is a module at a pinned version.
type project struct {
	Name, Module, Version string
	// Count is how many times a run runs each suite (-test.count): more
	// than 1 for a suite too short to measure once. 0 means 1.
	Count int
	// Skip is the tests a run skips (-test.skip): tests that fail now
	// and then with sync's types too, on a loaded machine.
	Skip string
	// local, if set, is a directory holding the module, copied instead
	// of downloading Module@Version.
	local string
}

func (p project) String() string { return p.Module + "@" + p.Version }

// known are the projects -projects can name by their short name, the
// first four the default. Their tests start goroutines that share the
// projects' own mutexes: golang.org/x/sync's semaphore and singleflight,
// groupcache's groups and their singleflight, golang-lru's caches, conc's
// pools and parallel iterators.
//
// golang-lru's TestLRUWithPurge is skipped: it expects its cache's
// cleanup goroutine, ticking every 1.5 ms, to have removed an entry
// 150 ms after it expired, which on a loaded machine it sometimes has
// not, unconverted too (3 runs of 10 on two shared cores). Its
// expirable package's ExampleLRU is skipped for the same reason: it
// expects that goroutine to have removed an entry 100 ms after it
// expired (it failed so once in two rounds at a load of 4 on two cores,
// in Off mode).
//
// ttlcache and go-cache are not among the default. ttlcache's
// Test_Cache_Get counts the allocations of one Get on a new cache, and
// fails in Order mode: that Get is the first to take an item's lock
// under the cache's, and the first nesting of two locks makes their
// detection state (the rest of its suite can be measured with -skip
// '^Test_Cache_Get$'); its suite also depends on timings of a few hundred
// milliseconds and on goroutines having stopped by its end (goleak), and
// fails now and then on a loaded machine, unconverted too. go-cache's
// tests are mostly sequential and sleep for expiries: a tenth of a second
// of CPU time, too little to measure.
var known = []project{
	{Name: "x/sync", Module: "golang.org/x/sync", Version: "v0.25.0"},
	{Name: "groupcache", Module: "github.com/golang/groupcache", Version: "v0.0.0-20241129210726-2c02b8208cf8"},
	{Name: "golang-lru", Module: "github.com/hashicorp/golang-lru/v2", Version: "v2.0.7", Skip: "^(TestLRUWithPurge|ExampleLRU)$"},
	{Name: "conc", Module: "github.com/sourcegraph/conc", Version: "v0.3.0", Count: 10},
	{Name: "ttlcache", Module: "github.com/jellydator/ttlcache/v3", Version: "v3.4.1"},
	{Name: "go-cache", Module: "github.com/patrickmn/go-cache", Version: "v2.1.0+incompatible"},
}

const defaultProjects = "x/sync,groupcache,golang-lru,conc"

// defaultTimeout is each run's -test.timeout unless -timeout says
// otherwise.
const defaultTimeout = 10 * time.Minute

// The variants a round runs: the unconverted suites, then the converted
// ones in each detection mode.
const variantSync = "sync"

var variants = []string{variantSync, "off", "cycles", "order"}

type config struct {
	projects  []project
	rounds    int
	warmup    int
	locksmith string // root of the locksmith checkout
	work      string // "" for a temporary directory
	keep      bool
	race      bool
	short     bool
	count     int
	runRE     string
	skipRE    string
	timeout   time.Duration
	quiet     bool
}

func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	code, err := measureAll(cfg, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "suitecost: %v\n", err)
		return exitError
	}
	return code
}

const shortUsage = "usage: suitecost [-projects list] [-rounds N] [-warmup N] [-locksmith dir] [-work dir] [-keep] [-race=false] [-short] [-count N] [-run regexp] [-skip regexp] [-timeout d] [-quiet]"

func parseArgs(args []string, stderr io.Writer) (config, error) {
	cfg := config{}
	fs := flag.NewFlagSet("suitecost", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var projects string
	fs.StringVar(&projects, "projects", defaultProjects, "comma-separated `projects`: a short name ("+knownNames()+") or module@version")
	fs.IntVar(&cfg.rounds, "rounds", 5, "`N` counted rounds; each runs every suite once with the sync types and once in each detection mode")
	fs.IntVar(&cfg.warmup, "warmup", 1, "`N` rounds run first and not counted")
	fs.StringVar(&cfg.locksmith, "locksmith", "", "`dir` of the locksmith checkout the projects are pointed at (default: the one enclosing the working directory)")
	fs.StringVar(&cfg.work, "work", "", "work `dir` for the copies and binaries (default: a temporary directory, removed at the end unless -keep or a suite failed)")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the work directory")
	fs.BoolVar(&cfg.race, "race", true, "build the test binaries with -race (needs cgo)")
	fs.BoolVar(&cfg.short, "short", false, "run the suites with -test.short")
	fs.IntVar(&cfg.count, "count", 0, "run each suite `N` times per run (-test.count); 0 for each project's own count (10 for conc,\n"+
		"whose suites take a few tens of milliseconds; 1 for the others)")
	fs.StringVar(&cfg.runRE, "run", "", "run only the tests matching `regexp` (-test.run)")
	fs.StringVar(&cfg.skipRE, "skip", "", "skip the tests matching `regexp` (-test.skip), e.g. one that fails after the rewrite, to measure the rest;\n"+
		"it replaces the projects' own (golang-lru skips ^(TestLRUWithPurge|ExampleLRU)$, tests of timings that fail on a loaded machine)")
	fs.DurationVar(&cfg.timeout, "timeout", defaultTimeout, "-test.timeout of each run")
	fs.BoolVar(&cfg.quiet, "quiet", false, "no progress on stderr")
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stderr, "%s\n\nMeasures the CPU and wall time of real test suites with sync.Mutex and sync.RWMutex\n"+
			"replaced by locksmith's, in each LOCKSMITH_DETECT mode, against the unconverted suites.\n"+
			"Results go to stdout, progress to stderr. Flags:\n\n", shortUsage)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		return cfg, err
	}
	fail := func(e error) (config, error) {
		fmt.Fprintf(stderr, "%s\nsuitecost: %v\n", shortUsage, e)
		return cfg, e
	}
	if err != nil {
		return fail(err)
	}
	if fs.NArg() > 0 {
		return fail(fmt.Errorf("unexpected arguments: %q", fs.Args()))
	}
	if cfg.rounds < 1 || cfg.warmup < 0 || cfg.count < 0 {
		return fail(fmt.Errorf("-rounds must be at least 1, -warmup and -count at least 0"))
	}
	if cfg.projects, err = parseProjects(projects); err != nil {
		return fail(err)
	}
	if cfg.locksmith == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fail(err)
		}
		if cfg.locksmith, err = findLibrary(wd); err != nil {
			return fail(err)
		}
	} else if cfg.locksmith, err = filepath.Abs(cfg.locksmith); err != nil {
		return fail(err)
	}
	if m, err := moduleOf(cfg.locksmith); err != nil || m != libraryModule {
		return fail(fmt.Errorf("-locksmith %s: not the root of a checkout of %s", cfg.locksmith, libraryModule))
	}
	return cfg, nil
}

func knownNames() string {
	var s []string
	for _, p := range known {
		s = append(s, p.Name)
	}
	return strings.Join(s, ", ")
}

func parseProjects(list string) ([]project, error) {
	var ps []project
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		i := slices.IndexFunc(known, func(p project) bool { return p.Name == s })
		switch {
		case i >= 0:
			ps = append(ps, known[i])
		case strings.Contains(s, "@"):
			mod, ver, _ := strings.Cut(s, "@")
			if mod == "" || ver == "" {
				return nil, fmt.Errorf("-projects: %q: want module@version", s)
			}
			ps = append(ps, project{Name: mod, Module: mod, Version: ver})
		default:
			return nil, fmt.Errorf("-projects: %q: not one of %s, nor module@version", s, knownNames())
		}
	}
	if len(ps) == 0 {
		return nil, errors.New("-projects: no project")
	}
	return ps, nil
}

// findLibrary returns the directory at or above dir whose go.mod declares
// the locksmith module.
func findLibrary(dir string) (string, error) {
	for d := dir; ; {
		if m, err := moduleOf(d); err == nil && m == libraryModule {
			return d, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", fmt.Errorf("no checkout of %s encloses %s; name one with -locksmith", libraryModule, dir)
		}
		d = up
	}
}

// moduleOf returns the module path that dir/go.mod declares.
func moduleOf(dir string) (string, error) {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", errors.New("no module line")
}

// goEnv is the environment of the go commands suitecost runs: outside
// any workspace (the copies are modules of their own), free to add
// requirements to the copies' go.mod, and without LOCKSMITH_ variables,
// which the suites get only from runSuite.
func goEnv() []string {
	env := baseEnv()
	return append(env, "GOWORK=off", "GOFLAGS=-mod=mod")
}

// baseEnv is this process's environment without the detector's
// variables.
func baseEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "LOCKSMITH_DETECT=") || strings.HasPrefix(kv, "LOCKSMITH_DETECT_REPORT=") ||
			strings.HasPrefix(kv, "GOWORK=") || strings.HasPrefix(kv, "GOFLAGS=")
	})
}

// goCmd runs the go command in dir and returns its standard output; an
// error carries its standard error.
func goCmd(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = goEnv()
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("go %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, strings.TrimSpace(errb.String()))
	}
	return out, nil
}

// download fetches p through the module proxy into the module cache and
// returns its directory there (read-only).
func download(p project, tmp string) (string, error) {
	out, err := goCmd(tmp, "mod", "download", "-json", p.String())
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr == nil && info.Error != "" {
		return "", fmt.Errorf("go mod download %s: %s", p, info.Error)
	}
	if err != nil {
		return "", err
	}
	if info.Dir == "" {
		return "", fmt.Errorf("go mod download %s: no directory in %s", p, out)
	}
	return info.Dir, nil
}

// copyTree copies the regular files under src to dst, writable.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, info.Mode().Perm()|0o200)
	})
}
