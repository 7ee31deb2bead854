// Package testkit is the root of locksmith's test machinery: the helpers,
// shared suites, models and checks that the library's tests, its
// benchmarks and the bench module use. It holds no code of its own; its
// packages are:
//
//   - testutil: liveness deadlines, goroutines started with their panic
//     captured, stack snapshots, the floor lock and the benchmark helpers;
//   - locktest: the suites package mutex and package monitor share;
//   - detecttest: configuring and observing the deadlock detector;
//   - stress: the stress mix behind TestStress and lockbench -soak;
//   - fuzzmodel: the model-based fuzz drivers;
//   - cputime: the process's CPU time, for benchmarks;
//   - readmecheck: the test that keeps README.md's snippets compiling;
//   - apidoc: the test that keeps go doc of the public packages free of
//     internal names and every exported name documented;
//   - layout: the test that keeps the kit out of the library;
//   - catalog: real blocking-bug shapes and their fixed twins, run as
//     test binaries in each detection mode.
//
// The rest of internal/ is the engine, which sits below the public
// packages mutex, monitor, condvar and detect and is linked into every
// binary that uses them. The kit sits above them (its suites, models and
// stress mix drive the public packages) and is linked only into tests and
// the bench module's commands. No library package, public or internal, may
// import a package under internal/testkit; the test in
// internal/testkit/layout enforces it.
package testkit
