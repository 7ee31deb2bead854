package main

import (
	"context"
	"os/exec"
	"runtime/debug"
	"strings"
	"time"
)

// libraryModule is the module whose version lockbench reports.
const libraryModule = "github.com/locksmith-go/locksmith"

// libraryVersion returns the version of locksmith this binary was built
// with: the module version when it is a dependency at a release; else the
// VCS revision the go command stamped (with "+dirty" for uncommitted
// changes); else, for `go run` in a checkout (which stamps none), what
// gitDescribe says; else "(devel)".
func libraryVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	mods := append([]*debug.Module{&info.Main}, info.Deps...)
	for _, m := range mods {
		if m.Path == libraryModule && m.Version != "" && m.Version != "(devel)" {
			return m.Version
		}
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		return rev[:min(12, len(rev))] + dirty
	}
	if v := gitDescribe(); v != "" {
		return v
	}
	return "(devel)"
}

// gitDescribe names the checkout's commit, with "-dirty" if tracked files
// other than BENCHMARKS.md differ from it: the page is rewritten by the
// very run that asks, so its own change says nothing about the code.
func gitDescribe() string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "describe", "--always", "--abbrev=12").Output()
	if err != nil {
		return ""
	}
	v := strings.TrimSpace(string(out))
	diff := exec.CommandContext(ctx, "git", "diff", "--quiet", "HEAD", "--", ".", ":(top,exclude)BENCHMARKS.md")
	if err := diff.Run(); err != nil {
		v += "-dirty"
	}
	return v
}
