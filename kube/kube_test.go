package kube

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func spec() Spec {
	return Spec{Name: "logs4", Image: "registry.example/scalelab:1.0", Segments: 4,
		StartAt: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC), RunArgs: []string{"logs", "--target", "postgres://scalelab@pg:5432/scalelab", "--users", "32", "--duration", "10m"},
		ResultsClaim: "scalelab-results", CPU: "2", Memory: "1Gi", EnvFromSecret: "pg-password", Namespace: "load"}
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./kube -update writes it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file:\n%s", name, got)
	}
}

// strict decodes a rendered manifest back into the API type, refusing any
// field the type does not have.
func strict(t *testing.T, b []byte) *batchv1.Job {
	t.Helper()
	var j batchv1.Job
	if err := yaml.UnmarshalStrict(b, &j); err != nil {
		t.Fatalf("the manifest does not decode strictly into batch/v1 Job: %v", err)
	}
	return &j
}

// rendered builds the Job of spec() with build, renders it as YAML,
// compares that with the golden file name and decodes it back strictly.
func rendered(t *testing.T, build func(Spec) (*batchv1.Job, error), name string) *batchv1.Job {
	t.Helper()
	j, err := build(spec())
	if err != nil {
		t.Fatal(err)
	}
	b, err := YAML(j, "test")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, name, b)
	return strict(t, b)
}

func TestIndexedJob(t *testing.T) {
	got := rendered(t, IndexedJob, "job.yaml")
	js := got.Spec
	if got.APIVersion != "batch/v1" || got.Kind != "Job" || got.Name != "logs4" || got.Namespace != "load" {
		t.Errorf("object %s/%s %s/%s", got.APIVersion, got.Kind, got.Namespace, got.Name)
	}
	if js.CompletionMode == nil || *js.CompletionMode != batchv1.IndexedCompletion || *js.Completions != 4 || *js.Parallelism != 4 ||
		js.BackoffLimitPerIndex == nil || *js.BackoffLimitPerIndex != 0 || *js.MaxFailedIndexes != 4 {
		t.Errorf("job spec %+v", js)
	}
	pod := js.Template.Spec
	c := pod.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"run logs --target postgres://scalelab@pg:5432/scalelab", "--segment $(JOB_COMPLETION_INDEX)/4",
		"--start-at 2026-11-25T10:00:00Z", "--out /results/logs4/shard-$(JOB_COMPLETION_INDEX)"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if pod.RestartPolicy != "Never" || pod.Volumes[0].PersistentVolumeClaim.ClaimName != "scalelab-results" || c.VolumeMounts[0].MountPath != "/results" {
		t.Errorf("pod %+v", pod)
	}
	if c.Env[0].Name != "JOB_COMPLETION_INDEX" || c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("env %+v", c.Env)
	}
	if c.EnvFrom[0].SecretRef.Name != "pg-password" || c.Resources.Limits.Cpu().String() != "2" || c.Resources.Requests.Memory().String() != "1Gi" {
		t.Errorf("container %+v", c)
	}
	// names as the API server validates them
	for _, n := range []string{got.Name, pod.Containers[0].Name, pod.Volumes[0].Name} {
		if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
			t.Errorf("name %q: %v", n, errs)
		}
	}
	if errs := validation.IsValidLabelValue(got.Labels["scalelab.dev/test"]); len(errs) > 0 {
		t.Errorf("label: %v", errs)
	}
}

func TestSetupJob(t *testing.T) {
	got := rendered(t, SetupJob, "setup.yaml")
	args := got.Spec.Template.Spec.Containers[0].Args
	if got.Name != "logs4-setup" || got.Spec.CompletionMode != nil || !slices.Contains(args, "--load-only") ||
		!strings.Contains(strings.Join(args, " "), "--out /results/logs4/setup") || slices.Contains(args, "--segment") {
		t.Errorf("setup job %s: args %v", got.Name, args)
	}
}

// TestSpecRefusals: every bad input says what was wrong.
func TestSpecRefusals(t *testing.T) {
	for _, c := range []struct {
		edit func(*Spec)
		want string
	}{
		{func(s *Spec) { s.Name = "Logs_4" }, "--name \"Logs_4\""},
		{func(s *Spec) { s.Name = "" }, "--name is required"},
		{func(s *Spec) { s.Image = "" }, "--image is required"},
		{func(s *Spec) { s.ResultsClaim = "" }, "--results-claim is required"},
		{func(s *Spec) { s.ResultsPath = "results" }, "absolute path"},
		{func(s *Spec) { s.CPU = "two" }, "--cpu \"two\""},
		{func(s *Spec) { s.PullPolicy = "Sometimes" }, "allowed: Always|IfNotPresent|Never"},
		{func(s *Spec) { s.Segments = 0 }, "--segments 0"},
		{func(s *Spec) { s.StartAt = time.Time{} }, "--start-at or --start-in is required"},
		{func(s *Spec) { s.RunArgs = []string{"--users", "4"} }, "must start with the scenario"},
		{func(s *Spec) { s.RunArgs = []string{"logs", "--segment", "0/4"} }, "--segment is set by the renderer"},
		{func(s *Spec) { s.RunArgs = []string{"logs", "--out=x"} }, "--out is set by the renderer"},
		{func(s *Spec) { s.RunArgs = []string{"logs", "--target", "postgres://u:hunter2@pg/db"} }, "holds a password"},
	} {
		s := spec()
		c.edit(&s)
		_, err := IndexedJob(s)
		if err == nil || !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.want, err)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}
