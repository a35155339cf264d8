package records

// SetLeakForTests makes in-process sites serve records without checking
// grants (a deliberately unsafe site) until the returned func is called.
func SetLeakForTests() (undo func()) {
	leakForTests = true
	return func() { leakForTests = false }
}
