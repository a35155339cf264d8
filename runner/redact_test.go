package runner

import "testing"

// Passwords in URL settings and in the command line are replaced; other
// values are kept as given.
func TestRedact(t *testing.T) {
	t.Parallel()
	got := redactSettings(map[string]string{
		"records.app":   "http://bob:S3cret@127.0.0.1:8080",
		"records.users": "100",
		"mhealth.app":   "http://127.0.0.1:8080",
	})
	want := map[string]string{
		"records.app":   "http://bob:REDACTED@127.0.0.1:8080",
		"records.users": "100",
		"mhealth.app":   "http://127.0.0.1:8080",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	args := redactArgs([]string{"run", "--target", "postgres://u:S3cret@h/db", "--set", "redis.password=S3cret"})
	if args[2] != "postgres://u:REDACTED@h/db" || args[4] != "redis.password=REDACTED" {
		t.Errorf("redactArgs: %q", args)
	}
}
