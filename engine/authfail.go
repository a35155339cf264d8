package engine

import "fmt"

// PasswordSources names where an engine's password comes from, for the
// error of a refused login: the environment variable and, when the
// engine has one, the setting naming a 0600 password file.
type PasswordSources struct {
	Env  string // REDISCLI_AUTH
	File string // redis.password_file; "" when the engine has no such setting
}

// AuthError is the error of a server refusing a login: a configuration
// error (ErrConfig, exit 2) that names the user (when there is one) and
// where the password is given, wrapping the server's own error.
func AuthError(what, user string, src PasswordSources, err error) error {
	who := "the login"
	if user != "" {
		who = "user " + user
	}
	where := "in " + src.Env
	if src.File != "" {
		where += " or in a 0600 file named by --set " + src.File + "=FILE"
	}
	return fmt.Errorf("%s: %w: the server refused %s: give the password %s (a --cluster's secret file is used otherwise): %w",
		what, ErrConfig, who, where, err)
}
