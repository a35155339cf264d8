package results

// Merged is run.json's "merged" section of a result that `scalelab merge`
// built from the segments of a divided test: which segments it holds,
// from where, and which are missing or failed.
type Merged struct {
	Count int `json:"count"` // segments of the test
	// Shards are the segments merged, in index order.
	Shards []MergedShard `json:"shards"`
	// Missing and Failed name the indexes of segments not merged: no
	// directory given, or a run that did not finish. Either makes the
	// result incomplete (merge --allow-incomplete).
	Missing []int `json:"missing,omitempty"`
	Failed  []int `json:"failed,omitempty"`
	// Seconds is how long the merge took.
	Seconds float64 `json:"merge_s"`
}

// MergedShard is one merged segment: its index, directory as given, host,
// status and exit code, and how late after the shared start it began.
type MergedShard struct {
	Index       int     `json:"index"`
	Dir         string  `json:"dir"`
	Host        string  `json:"host"`
	Status      string  `json:"status"`
	ExitCode    int     `json:"exit_code"`
	StartLateMs float64 `json:"start_late_ms"`
	OffsetS     float64 `json:"offset_s"` // its t = 0 on the merged timeline
	Clock       Clock   `json:"clock"`
}
