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
// The files, by job:
//   - the spec: spec.go (its types), parse.go (Parse, profiles), decode.go
//     (the YAML decoder and its errors), keys.go (what a key may be and
//     its value), factors.go (factors, combinations, repeats, search),
//     app.go and cachetier.go (the app and cache tiers), validate.go
//     (Validate);
//   - the matrix: matrix.go (combinations), baseline.go (what each is
//     compared with), runoptions.go (a run's runner options);
//   - execution: execute.go (Run), clusters.go (the local clusters around
//     a group's runs), repeats.go (the repeat rule and the order of runs),
//     runs.go (one run and its progress line), segments.go (a divided
//     run), estimate.go (the time an experiment takes), finish.go
//     (verdicts and the exit status);
//   - the knee search: knee.go (raise users or rate, doubling then
//     bisecting, until the SLO breaks);
//   - results: result.go (comparison rows, the files written), table.go
//     (the terminal table), check.go (`scalelab check` of a results
//     directory).
//
// Statistics live in package experiment/stats: means over repeats,
// Student-t confidence intervals, Welch's t-test and verdicts against the
// baseline. The SLO syntax lives in the top-level slo package, which the
// runner uses for `scalelab run --slo`.
package experiment
