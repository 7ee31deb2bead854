// Package layout holds the test that keeps the test kit out of the
// library: no package a user's binary links may depend on a package under
// internal/testkit.
package layout_test

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const (
	module = "github.com/locksmith-go/locksmith"
	kit    = module + "/internal/testkit"
	root   = "../../.." // the library module's directory
)

// inKit reports whether the import path is the test kit or a package under it.
func inKit(path string) bool {
	return path == kit || strings.HasPrefix(path, kit+"/")
}

// goList runs go list with args in the library module's directory, with
// env added to the environment, and returns the lines it prints.
func goList(t *testing.T, env []string, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = root
	cmd.Env = append(cmd.Environ(), env...)
	out, err := cmd.Output()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
	}
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// libraryPackages returns the library module's packages that a user's
// binary may link: every package of the module except the test kit, the
// example programs and the bench module's packages.
func libraryPackages(t *testing.T) []string {
	t.Helper()
	var pkgs []string
	for _, p := range goList(t, nil, module+"/...") {
		if inKit(p) || p == module+"/bench" || strings.HasPrefix(p, module+"/bench/") ||
			strings.HasPrefix(p, module+"/examples/") {
			continue
		}
		pkgs = append(pkgs, p)
	}
	for _, name := range []string{"mutex", "monitor", "condvar", "detect", "internal/core"} {
		if !slices.Contains(pkgs, module+"/"+name) {
			t.Fatalf("go list %s/... does not list %s/%s; it lists %q", module, module, name, pkgs)
		}
	}
	return pkgs
}

// TestLibraryDoesNotImportKit: the dependencies of every non-test package
// of the library (mutex, monitor, condvar, detect and the engine under
// internal/), as go list -deps gives them, contain no package of the test
// kit, on this machine's platform and on the others the engine has
// platform-specific files for.
func TestLibraryDoesNotImportKit(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH:", err)
	}
	pkgs := libraryPackages(t)
	for _, platform := range []struct {
		name string
		env  []string
	}{
		{"host", nil},
		{"linux-amd64", []string{"GOOS=linux", "GOARCH=amd64"}},
		{"linux-arm64", []string{"GOOS=linux", "GOARCH=arm64"}},
		{"windows-386", []string{"GOOS=windows", "GOARCH=386"}},
	} {
		t.Run(platform.name, func(t *testing.T) {
			// One line per dependency: its import path, then those of the
			// packages it imports.
			args := append([]string{"-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}"}, pkgs...)
			lines := goList(t, platform.env, args...)
			for _, line := range lines {
				f := strings.Fields(line)
				for _, imp := range f[1:] {
					if inKit(imp) {
						t.Errorf("%s imports %s: no library package may depend on the test kit", f[0], imp)
					}
				}
			}
			if len(lines) < len(pkgs) {
				t.Fatalf("go list -deps gives %d packages for the library's %d", len(lines), len(pkgs))
			}
		})
	}
}

// TestLibraryDoesNotLinkTesting checks that no public package of the
// library depends on package testing, so that a program using the locks
// does not link the test framework (detect and deadlock tell a test binary
// by rt.TestBinary instead of testing.Testing).
func TestLibraryDoesNotLinkTesting(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH:", err)
	}
	for _, p := range []string{"mutex", "monitor", "condvar", "detect", "deadlock", "misuse"} {
		if deps := goList(t, nil, "-deps", module+"/"+p); slices.Contains(deps, "testing") {
			t.Errorf("%s depends on package testing: every program that imports it links the test framework", p)
		}
	}
}
