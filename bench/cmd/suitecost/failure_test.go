package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFirstReport(t *testing.T) {
	tests := []struct{ name, out, want string }{{
		name: "a panic comes first, even after a failed check",
		out: "--- FAIL: TestA (0.00s)\n    a_test.go:9: boom\n" +
			"panic: detect: lock order inversion: goroutine 7 locked 0x1 while holding 0x2 [recovered]\n\tpanic: again\n\ngoroutine 7 [running]:\n",
		want: "panic: detect: lock order inversion: goroutine 7 locked 0x1 while holding 0x2 [recovered]",
	}, {
		name: "a race report",
		out:  "==================\nWARNING: DATA RACE\nWrite at 0x00c by goroutine 8:\n",
		want: "WARNING: DATA RACE",
	}, {
		name: "testify's report: the check's line and the lines under it",
		out: `--- FAIL: Test_Cache_Get (0.01s)
    --- FAIL: Test_Cache_Get/found (0.00s)
        cache_test.go:735: 
            	Error Trace:	/tmp/w/cache_test.go:735
            	Error:      	Not equal: 
            	            	expected: 0
            	            	actual  : 6
            	Test:       	Test_Cache_Get/found
    --- FAIL: Test_Cache_Get/missing (0.00s)
        cache_test.go:735: 
`,
		want: "cache_test.go:735: | Error Trace: /tmp/w/cache_test.go:735 | Error: Not equal: | expected: 0 | actual : 6 | Test: Test_Cache_Get/found",
	}, {
		name: "t.Errorf",
		out:  "--- FAIL: TestB (0.00s)\n    b_test.go:12: got 3, want 4\n    b_test.go:13: second\nFAIL\n",
		want: "b_test.go:12: got 3, want 4",
	}, {
		name: "goleak after the tests passed",
		out:  "PASS\ngoleak: Errors on successful test run: found unexpected goroutines:\n[Goroutine 49 in state select\n",
		want: "goleak: Errors on successful test run: found unexpected goroutines:",
	}, {
		name: "nothing recognisable",
		out:  "FAIL\n",
		want: "",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, firstReport([]byte(tt.out)))
		})
	}
}

func TestFailingTests(t *testing.T) {
	assert.Equal(t, "TestA (2 subtests), TestB, TestC (1 subtest)",
		failingTests([]string{"TestA", "TestA/x", "TestA/y", "TestB", "TestC/z", "TestC"}))
}
