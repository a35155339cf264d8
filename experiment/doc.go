// Package experiment runs matrices of runs described in YAML files and
// answers "which configuration is better, and are we sure?".
//
// An experiment file names a scenario, a load, factors (settings, load
// fields, the engine or the cluster size, each with levels), which level
// combinations to run (the full product, all combinations changing at most
// N factors from their first level, or an explicit list), how often to
// repeat each (a count, or until the 95 % confidence interval is within a
// percentage of the mean), the order of the runs (interleaved by default,
// randomized or grouped), the baseline and an SLO. Parse checks the file
// alone and reports every error with file:line:column; Validate checks it
// against the scenarios, engines and cluster provisioners of this build;
// Run executes it through the runner package, one results directory per
// run, starting and stopping local clusters around the runs that need
// them, and writes experiment.json (the Result type), comparison.csv,
// comparison.json and, for knee searches, knee.csv.
//
// Statistics (stats.go): means over repeats, Student-t confidence
// intervals, Welch's t-test and verdicts against the baseline. Knee search
// (knee.go): raise users or rate, doubling then bisecting, until the SLO
// breaks. The SLO syntax lives in the top-level slo package, which the
// runner uses for `scalelab run --slo`.
package experiment
