// Command scalelab measures how an application's data backend scales: it
// runs a scenario against a data store under a load model and writes a
// self-describing results directory. See README.md.
package main

import "github.com/scalelab/scalelab/cli"

func main() { cli.Exec() }
