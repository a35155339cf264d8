// Package examples embeds the example experiment files of this directory,
// so that `scalelab study run` finds the experiments a study names from
// any working directory.
package examples

import "embed"

// Files are the experiment files (*.yaml).
//
//go:embed *.yaml
var Files embed.FS
