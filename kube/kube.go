// Package kube renders the Kubernetes manifests of a divided scalelab test
// (`scalelab kube job` and `scalelab kube setup`): an Indexed Job whose
// pods run the test's segments, and the Job that loads the data once. The
// objects are built from the official Kubernetes API types and written as
// YAML; nothing here talks to a cluster.
package kube

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/scalelab/scalelab/segment"
)

// Spec is what the user states about the divided test and where it runs.
type Spec struct {
	Name           string    // the Jobs' name (a DNS-1123 label); the setup Job is Name-setup
	Namespace      string    // "" leaves it to kubectl's context
	Image          string    // a scalelab image (the repository's Dockerfile)
	Segments       int       // pods of the Indexed Job, one segment each
	StartAt        time.Time // the instant every segment's load starts at
	RunArgs        []string  // `scalelab run` arguments: SCENARIO and its flags
	ResultsClaim   string    // a PersistentVolumeClaim the results are written to
	ResultsPath    string    // where it is mounted; default /results
	CPU, Memory    string    // requests = limits per pod; "" for none
	ServiceAccount string
	PullPolicy     string // IfNotPresent, Always or Never; "" for the cluster's default
	EnvFromSecret  string // a Secret whose keys become the pods' environment (PGPASSWORD, ...)
}

// DefaultResultsPath is where the results claim is mounted.
const DefaultResultsPath = "/results"

// ErrSpec marks a spec that cannot be rendered.
var ErrSpec = errors.New("bad kube spec")

// SetByRenderer are the run flags the renderer sets for every pod (a
// user leaves them out).
var SetByRenderer = []string{"segment", "start-at", "out", "load-only"}

// Missing names the required flags s lacks, all at once (the segments and start time only for the Indexed Job: job is
// true).
func (s *Spec) Missing(job bool) []string {
	var m []string
	if s.Name == "" {
		m = append(m, "--name")
	}
	if s.Image == "" {
		m = append(m, "--image")
	}
	if s.ResultsClaim == "" {
		m = append(m, "--results-claim")
	}
	if job && s.Segments == 0 {
		m = append(m, "--segments")
	}
	if job && s.StartAt.IsZero() {
		m = append(m, "--start-at or --start-in")
	}
	return m
}

// Validate checks the spec as a Job needs it (the segments and start time
// only for the Indexed Job: job is true).
func (s *Spec) Validate(job bool) error {
	bad := func(format string, a ...any) error { return fmt.Errorf("%w: "+format, append([]any{ErrSpec}, a...)...) }
	if s.Name == "" {
		return bad("--name is required: the Job's name")
	}
	// pod names carry the Job's name and a suffix: keep room for it
	if errs := validation.IsDNS1123Label(s.Name); len(errs) > 0 || len(s.Name) > 50 {
		return bad("--name %q: %s (lower-case letters, digits and '-', starting and ending with a letter or digit, at most 50 characters)", s.Name, strings.Join(append(errs, ""), " "))
	}
	if s.Namespace != "" {
		if errs := validation.IsDNS1123Label(s.Namespace); len(errs) > 0 {
			return bad("--namespace %q: %s", s.Namespace, strings.Join(errs, "; "))
		}
	}
	if s.Image == "" {
		return bad("--image is required: a scalelab image built from the repository's Dockerfile")
	}
	if s.ResultsClaim == "" {
		return bad("--results-claim is required: a PersistentVolumeClaim the segments write their results directories to, so that they outlive the pods and can be merged")
	}
	if errs := validation.IsDNS1123Subdomain(s.ResultsClaim); len(errs) > 0 {
		return bad("--results-claim %q: %s", s.ResultsClaim, strings.Join(errs, "; "))
	}
	if s.ResultsPath == "" {
		s.ResultsPath = DefaultResultsPath
	}
	if !path.IsAbs(s.ResultsPath) {
		return bad("--results-path %q must be an absolute path inside the container", s.ResultsPath)
	}
	for flag, q := range map[string]string{"--cpu": s.CPU, "--memory": s.Memory} {
		if q == "" {
			continue
		}
		if _, err := resource.ParseQuantity(q); err != nil {
			return bad("%s %q: %v (e.g. --cpu 2, --cpu 500m, --memory 1Gi)", flag, q, err)
		}
	}
	switch s.PullPolicy {
	case "", string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever):
	default:
		return bad("--pull-policy %q; allowed: Always|IfNotPresent|Never", s.PullPolicy)
	}
	if s.EnvFromSecret != "" {
		if errs := validation.IsDNS1123Subdomain(s.EnvFromSecret); len(errs) > 0 {
			return bad("--env-from-secret %q: %s", s.EnvFromSecret, strings.Join(errs, "; "))
		}
	}
	if err := CheckRunArgs(s.RunArgs); err != nil {
		return fmt.Errorf("%w: %w", ErrSpec, err)
	}
	if job {
		if s.Segments < 1 || s.Segments > segment.MaxCount {
			return bad("--segments %d must be in [1, %d]", s.Segments, segment.MaxCount)
		}
		if s.StartAt.IsZero() {
			return bad("--start-at or --start-in is required: the instant every segment starts its load")
		}
	}
	return nil
}

// CheckRunArgs wants a scenario first, none of the flags the renderer
// sets, and no password in a target (it would sit in the manifest).
func CheckRunArgs(args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return errors.New("the run arguments must start with the scenario: scalelab kube job [flags] -- SCENARIO [run flags]")
	}
	for _, a := range args[1:] {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") {
			for _, f := range SetByRenderer {
				if name == f {
					return fmt.Errorf("run flag --%s is set by the renderer for every pod; leave it out", f)
				}
			}
		}
		if i := strings.Index(a, "://"); i >= 0 {
			if u, err := url.Parse(a[strings.LastIndexAny(a[:i], "= ")+1:]); err == nil && u.User != nil {
				if _, has := u.User.Password(); has {
					return fmt.Errorf("a run argument holds a password in a URL (%s): it would be written into the manifest; put it in a Secret and pass --env-from-secret (PGPASSWORD for postgres)", u.Redacted())
				}
			}
		}
	}
	return nil
}

// labels of every object and pod of the test.
func (s *Spec) labels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": "scalelab", "scalelab.dev/test": s.Name}
}

// container is the scalelab container running args.
func (s *Spec) container(args []string, env []corev1.EnvVar) corev1.Container {
	c := corev1.Container{
		Name:            "scalelab",
		Image:           s.Image,
		ImagePullPolicy: corev1.PullPolicy(s.PullPolicy),
		Command:         []string{"scalelab"},
		Args:            args,
		Env:             env,
		VolumeMounts:    []corev1.VolumeMount{{Name: "results", MountPath: s.ResultsPath}},
	}
	if s.CPU != "" || s.Memory != "" {
		rl := corev1.ResourceList{}
		if s.CPU != "" {
			rl[corev1.ResourceCPU] = resource.MustParse(s.CPU)
		}
		if s.Memory != "" {
			rl[corev1.ResourceMemory] = resource.MustParse(s.Memory)
		}
		c.Resources = corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}
	}
	if s.EnvFromSecret != "" {
		c.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: s.EnvFromSecret}}}}
	}
	return c
}

// job is a Job of one container around args.
func (s *Spec) job(name string, args []string, env []corev1.EnvVar) *batchv1.Job {
	labels := s.labels()
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:      corev1.RestartPolicyNever,
					ServiceAccountName: s.ServiceAccount,
					Containers:         []corev1.Container{s.container(args, env)},
					Volumes: []corev1.Volume{{Name: "results", VolumeSource: corev1.VolumeSource{
						PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: s.ResultsClaim}}}},
				},
			},
		},
	}
}

// IndexedJob is the Job whose N pods run the N segments: completion index
// I runs `scalelab run ... --segment I/N --start-at T` into
// RESULTS/NAME/shard-I. A failed segment is not run again
// (backoffLimitPerIndex 0: a late replay would not start with the others)
// and does not stop the others (maxFailedIndexes N).
func IndexedJob(s Spec) (*batchv1.Job, error) {
	if err := s.Validate(true); err != nil {
		return nil, err
	}
	n := int32(s.Segments)
	at := s.StartAt.UTC().Format(time.RFC3339Nano)
	args := append(append([]string{"run"}, s.RunArgs...),
		"--segment", fmt.Sprintf("$(JOB_COMPLETION_INDEX)/%d", n),
		"--start-at", at,
		"--out", path.Join(s.ResultsPath, s.Name, "shard-$(JOB_COMPLETION_INDEX)"),
		"--progress", "lines")
	env := []corev1.EnvVar{
		{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
			FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}},
		{Name: "SCALELAB_START_AT", Value: at},
	}
	j := s.job(s.Name, args, env)
	mode := batchv1.IndexedCompletion
	zero := int32(0)
	j.Spec.CompletionMode = &mode
	j.Spec.Completions, j.Spec.Parallelism = &n, &n
	j.Spec.BackoffLimitPerIndex = &zero
	j.Spec.MaxFailedIndexes = &n
	return j, nil
}

// SetupJob is the Job that loads the data once, before the Indexed Job:
// `scalelab run ... --load-only` into RESULTS/NAME/setup.
func SetupJob(s Spec) (*batchv1.Job, error) {
	if err := s.Validate(false); err != nil {
		return nil, err
	}
	args := append(append([]string{"run"}, s.RunArgs...), "--load-only", "--out", path.Join(s.ResultsPath, s.Name, "setup"), "--progress", "lines")
	j := s.job(s.Name+"-setup", args, nil)
	zero := int32(0)
	j.Spec.BackoffLimit = &zero
	return j, nil
}

// YAML renders a Job as a YAML document with a comment saying what made
// it.
func YAML(j *batchv1.Job, comment string) ([]byte, error) {
	b, err := yaml.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", j.Name, err)
	}
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(comment), "\n") {
		out.WriteString("# " + line + "\n")
	}
	out.Write(b)
	return []byte(out.String()), nil
}
