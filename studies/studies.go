// Package studies holds the published figures of the studies scalelab
// reproduces, one YAML file per study (NNN-name.yaml), embedded in the
// binary so that `scalelab study` works from any directory. The files are
// facts about the publications, each row naming its source table or
// figure; package study reads and checks them.
package studies

import "embed"

// Files are the study files.
//
//go:embed *.yaml
var Files embed.FS
