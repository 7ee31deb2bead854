package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPublishedPageIsItsReport: BENCHMARKS.md is what -from renders of
// docs/benchmarks.json, the run's report that lockplot draws the charts
// from, so that the tables and the charts are one run's and the page
// names the command that remakes both.
func TestPublishedPageIsItsReport(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	rep, err := readReport(filepath.Join(root, reportFile))
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, writeDocument(&buf, rep))
	page, err := os.ReadFile(filepath.Join(root, "BENCHMARKS.md"))
	require.NoError(t, err)
	assert.Equal(t, buf.String(), string(page),
		"BENCHMARKS.md is not the rendering of %s: go run ./bench/cmd/lockbench -from %s -format markdown > BENCHMARKS.md", reportFile, reportFile)
}
