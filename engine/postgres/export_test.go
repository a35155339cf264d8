package postgres

// WriteTestCA writes a CA and a server certificate it signs into dir (as
// `cluster up --opt tls=on` does) and returns the CA file.
func WriteTestCA(dir string) (string, error) { return writeServerTLS(dir, nil) }
