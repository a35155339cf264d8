package runner

import (
	"net/url"
	"strings"
)

// redactTarget removes a password from a URL-shaped target.
func redactTarget(t string) string {
	u, err := url.Parse(t)
	if err != nil || u.User == nil {
		return t
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "REDACTED")
	}
	return u.String()
}

// redactArgs returns the command line with passwords in targets and in
// password-like settings replaced.
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = redactTarget(a)
		if k, _, ok := strings.Cut(a, "="); ok && isSecretKey(k) {
			out[i] = k + "=REDACTED"
		}
	}
	return out
}

func isSecretKey(k string) bool {
	k = strings.ToLower(k)
	for _, s := range []string{"password", "passwd", "secret", "token"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// redactSettings returns settings with the passwords of URL values (a
// records.app of http://user:secret@host) replaced, for run.json.
func redactSettings(m map[string]string) map[string]string {
	for k, v := range m {
		if strings.Contains(v, "://") {
			m[k] = redactTarget(v)
		}
	}
	return m
}
