package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/scalelab/scalelab/results"
)

// ChildCommand is the hidden scalelab command an experiment starts once
// per segment of a divided run (`segments: N`): it reads the run's
// Options as JSON on stdin and executes them, writing the results
// directory the options name.
const ChildCommand = "segment-child"

// RunChild executes the Options read as JSON from stdin, quietly; the
// error carries the run's exit code.
func RunChild(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) error {
	var o Options
	dec := json.NewDecoder(stdin)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return results.UsageErr("%s: read the run's options from stdin: %v", ChildCommand, err)
	}
	p, err := NewPlan(&o)
	if err != nil {
		return err
	}
	if _, err := p.Execute(ctx, Quiet{}, stdout, stderr); err != nil {
		return fmt.Errorf("%s %s: %w", ChildCommand, o.Segment, err)
	}
	return nil
}
