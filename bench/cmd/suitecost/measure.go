package main

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// suite is a project ready to measure: its two copies, the packages whose
// suites are run, and their test binaries.
type suite struct {
	project
	dir     string // the project's work directory
	orig    string // module root of the copy with sync's types
	conv    string // module root of the rewritten copy
	rewrote counts
	pkgs    []pkg
	skipped []string // packages with tests that do not link locksmith after the rewrite
}

// pkg is one package of a project, with a test binary per copy.
type pkg struct {
	path    string // import path
	rel     string // directory relative to the module root
	syncBin string // test binary built from orig
	convBin string // test binary built from conv
}

// sample is one run of a project's suites, all its packages in turn.
type sample struct {
	cpu, wall time.Duration
}

// failure is a suite run that did not pass.
type failure struct {
	variant, pkg string
	err          error
	tests        []string // the tests that reported --- FAIL
	first        string   // the first panic, fatal error or race report line, else the first failed check
	log          string   // where the output is kept
}

// result is a project's measurements, or the failure that stopped them.
type result struct {
	*suite
	samples map[string][]sample // by variant, one per counted round
	fail    *failure
	err     error // preparing failed: download, rewrite or build
}

// prepare downloads p, makes the two copies, rewrites one, gives both the
// same go.mod and go.sum, picks the packages and builds their binaries.
//
// On an error it returns the suite as far as it got, for the report.
func prepare(cfg config, p project, work string, progress func(string, ...any)) (*suite, error) {
	dir := filepath.Join(work, strings.NewReplacer("/", "_", "@", "_").Replace(p.Name))
	s := &suite{project: p, dir: dir, orig: filepath.Join(dir, "sync"), conv: filepath.Join(dir, "locksmith")}
	if p.local == "" {
		progress("%s: downloading", p)
	}
	// A work directory given with -work may hold a previous run's copies,
	// already rewritten.
	if err := os.RemoveAll(dir); err != nil {
		return s, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return s, err
	}
	src := p.local
	if src == "" {
		var err error
		if src, err = download(p, dir); err != nil {
			return s, err
		}
	}
	for _, d := range []string{s.orig, s.conv} {
		if err := copyTree(src, d); err != nil {
			return s, err
		}
		// A module from before modules (+incompatible) has no go.mod;
		// its path is the one it was downloaded as.
		if _, err := os.Stat(filepath.Join(d, "go.mod")); os.IsNotExist(err) {
			if err := os.WriteFile(filepath.Join(d, "go.mod"), []byte("module "+p.Module+"\n\ngo 1.24\n"), 0o644); err != nil {
				return s, err
			}
		}
	}
	var err error
	if s.rewrote, err = rewriteTree(s.conv); err != nil {
		return s, fmt.Errorf("%s: rewrite: %w", p, err)
	}
	progress("%s: rewrote %s", p, s.rewrote)
	if _, err := goCmd(s.conv, "mod", "edit", "-require="+libraryModule+"@v0.0.0", "-replace="+libraryModule+"="+cfg.locksmith); err != nil {
		return s, err
	}
	if _, err := goCmd(s.conv, "mod", "tidy"); err != nil {
		return s, err
	}
	// The same build list on both sides: the copy with sync's types gets
	// the rewritten copy's go.mod and go.sum (never tidied, so the unused
	// requirement of locksmith stays and changes no version).
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(s.conv, f))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return s, err
		}
		if err := os.WriteFile(filepath.Join(s.orig, f), b, 0o644); err != nil {
			return s, err
		}
	}
	if err := s.selectPackages(); err != nil {
		return s, err
	}
	if len(s.pkgs) == 0 {
		return s, fmt.Errorf("%s: no package's tests link %s after the rewrite", p, mutexPath)
	}
	bin := filepath.Join(dir, "bin")
	for i := range s.pkgs {
		pk := &s.pkgs[i]
		progress("%s: building the test binaries of %s", p, pk.path)
		base := fmt.Sprintf("%02d-%s", i, filepath.Base(pk.path))
		pk.syncBin = filepath.Join(bin, "sync", base+".test")
		pk.convBin = filepath.Join(bin, "locksmith", base+".test")
		for _, b := range []struct{ root, out string }{{s.orig, pk.syncBin}, {s.conv, pk.convBin}} {
			// -vet=off: the suites are measured, not vetted, and a vet
			// check that a newer toolchain added must not stop an older
			// project's suite from building.
			args := []string{"test", "-c", "-vet=off", "-o", b.out}
			if cfg.race {
				args = append(args, "-race")
			}
			if _, err := goCmd(b.root, append(args, pk.path)...); err != nil {
				return s, err
			}
			if _, err := os.Stat(b.out); err != nil {
				return s, fmt.Errorf("%s: go test -c wrote no binary: %w", pk.path, err)
			}
		}
	}
	return s, nil
}

// selectPackages picks the packages of the rewritten copy whose test
// binaries link locksmith's mutex and detect packages: the ones whose
// suites the rewrite can change, and in which LOCKSMITH_DETECT takes
// effect (detect reads it in its package initialisation; mutex imports
// detect, and requiring both here keeps that checked).
func (s *suite) selectPackages() error {
	out, err := goCmd(s.conv, "list", "-test", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .Deps \" \"}}", "./...")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) < 3 || !strings.HasSuffix(f[0], ".test") {
			continue
		}
		path := strings.TrimSuffix(f[0], ".test")
		deps := strings.Fields(f[2])
		if !slices.Contains(deps, mutexPath) || !slices.Contains(deps, libraryModule+"/detect") {
			s.skipped = append(s.skipped, path)
			continue
		}
		rel, err := filepath.Rel(s.conv, f[1])
		if err != nil {
			return err
		}
		s.pkgs = append(s.pkgs, pkg{path: path, rel: rel})
	}
	return nil
}

// runVariant runs every package's suite once in variant and returns the
// CPU and wall time summed over them, or the first failure.
func (s *suite) runVariant(cfg config, variant string) (sample, *failure) {
	var total sample
	for _, pk := range s.pkgs {
		bin, root := pk.convBin, s.conv
		env := baseEnv()
		if variant == variantSync {
			bin, root = pk.syncBin, s.orig
		} else {
			env = append(env, "LOCKSMITH_DETECT="+variant)
		}
		count := cmp.Or(cfg.count, s.Count, 1)
		args := []string{"-test.timeout=" + cfg.timeout.String(), "-test.count=" + strconv.Itoa(count)}
		if cfg.short {
			args = append(args, "-test.short")
		}
		if cfg.runRE != "" {
			args = append(args, "-test.run="+cfg.runRE)
		}
		if skip := cmp.Or(cfg.skipRE, s.Skip); skip != "" {
			args = append(args, "-test.skip="+skip)
		}
		cmd := exec.Command(bin, args...)
		// Tests read their testdata relative to the package directory,
		// where go test runs them.
		cmd.Dir = filepath.Join(root, pk.rel)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		if err != nil {
			return total, s.failed(variant, pk, err, out.Bytes())
		}
		ps := cmd.ProcessState
		total.cpu += ps.UserTime() + ps.SystemTime()
		total.wall += wall
	}
	return total, nil
}

var (
	failLine = regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`)
	// panicLine is the first line of a panic, a fatal error, a race
	// report or goleak's report of goroutines left running: what stopped
	// the binary or failed it outside the tests' own checks.
	panicLine = regexp.MustCompile(`(?m)^(panic: .*|fatal error: .*|WARNING: DATA RACE|.*race detected during execution of test.*|goleak: .*)$`)
	// errorLine starts a test's own report of a failed check (t.Error,
	// t.Fatal, testify's assertions): "    file_test.go:123: message".
	errorLine = regexp.MustCompile(`(?m)^(\s+)\S+\.go:\d+: .*$`)
)

// failed describes a failed run and keeps its output beside the binaries.
func (s *suite) failed(variant string, pk pkg, err error, out []byte) *failure {
	f := &failure{variant: variant, pkg: pk.path, err: err}
	for _, m := range failLine.FindAllSubmatch(out, -1) {
		if t := string(m[1]); !slices.Contains(f.tests, t) {
			f.tests = append(f.tests, t)
		}
	}
	f.first = firstReport(out)
	f.log = filepath.Join(s.dir, fmt.Sprintf("fail-%s-%s.log", variant, filepath.Base(pk.path)))
	if werr := os.WriteFile(f.log, out, 0o644); werr != nil {
		f.log = ""
	}
	return f
}

// measure runs the warm-up and counted rounds of s; it stops at the first
// failure.
func (s *suite) measure(cfg config, progress func(string, ...any)) *result {
	r := &result{suite: s, samples: map[string][]sample{}}
	for round := range cfg.warmup + cfg.rounds {
		order := slices.Clone(variants)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		label := "warm-up"
		if round >= cfg.warmup {
			label = "round " + strconv.Itoa(round-cfg.warmup+1) + "/" + strconv.Itoa(cfg.rounds)
		}
		var line []string
		for _, v := range order {
			smp, f := s.runVariant(cfg, v)
			if f != nil {
				r.fail = f
				progress("%s: %s: %s failed in %s", s.project, label, f.pkg, v)
				return r
			}
			line = append(line, fmt.Sprintf("%s %.2fs", v, smp.cpu.Seconds()))
			if round >= cfg.warmup {
				r.samples[v] = append(r.samples[v], smp)
			}
		}
		progress("%s: %s: CPU %s", s.project, label, strings.Join(line, ", "))
	}
	return r
}

// measureAll prepares and measures every project and writes the report.
// It returns exitError if a suite failed.
func measureAll(cfg config, stdout, stderr io.Writer) (int, error) {
	progress := func(format string, a ...any) {
		if !cfg.quiet {
			fmt.Fprintf(stderr, "suitecost: "+format+"\n", a...)
		}
	}
	work := cfg.work
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "suitecost-"); err != nil {
			return exitError, err
		}
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return exitError, err
	}
	failed := false
	defer func() {
		switch {
		case cfg.work != "" || cfg.keep:
		case failed:
			fmt.Fprintf(stderr, "suitecost: the work directory %s is kept for the failures' logs\n", work)
		default:
			os.RemoveAll(work)
		}
	}()
	env := environment(cfg)
	var results []*result
	for _, p := range cfg.projects {
		s, err := prepare(cfg, p, work, progress)
		if err != nil {
			// A rewritten project that does not build is a finding too;
			// the other projects still run.
			failed = true
			progress("%s: %v", p, err)
			results = append(results, &result{suite: s, err: err})
			continue
		}
		r := s.measure(cfg, progress)
		if r.fail != nil {
			failed = true
		}
		results = append(results, r)
	}
	writeReport(stdout, cfg, env, results)
	if failed {
		return exitError, nil
	}
	return exitOK, nil
}

// firstReport returns the first line of the first panic, fatal error or
// race report in a failed run's output, or else the first failed check a
// test reported, with the lines indented under it (testify's expected and
// actual values) joined into one, or "" if there is neither.
func firstReport(out []byte) string {
	if m := panicLine.Find(out); m != nil {
		return strings.TrimSpace(string(m))
	}
	loc := errorLine.FindSubmatchIndex(out)
	if loc == nil {
		return ""
	}
	indent := loc[3] - loc[2]
	parts := []string{strings.TrimSpace(string(out[loc[0]:loc[1]]))}
	rest := strings.Split(string(out[loc[1]:]), "\n")
	for _, line := range rest[1:] {
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed == "" || len(line)-len(trimmed) <= indent || len(parts) == 8 {
			break
		}
		parts = append(parts, strings.Join(strings.Fields(trimmed), " "))
	}
	return strings.Join(parts, " | ")
}
