package records

// SetLeakForTests makes in-process sites serve records without checking
// grants (a deliberately unsafe site) until the returned func is called.
func SetLeakForTests() (undo func()) {
	leakForTests = true
	return func() { leakForTests = false }
}

// SetUnsafeCacheForTests makes in-process sites cache pages by URL alone
// and serve a cached record without checking the grant, until the returned
// func is called.
func SetUnsafeCacheForTests() (undo func()) {
	unsafeCacheForTests = true
	return func() { unsafeCacheForTests = false }
}
