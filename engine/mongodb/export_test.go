package mongodb

// AssumeRouters makes Connect take every server for a sharded cluster's
// router until the returned function restores it.
func AssumeRouters() (restore func()) {
	assumeRouters = true
	return func() { assumeRouters = false }
}
