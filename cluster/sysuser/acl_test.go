package sysuser

import (
	"fmt"
	"os"
	"testing"
)

// TestACL: granting search permission adds a named user entry and the
// mask a named entry needs, is idempotent, round-trips through the
// extended attribute's encoding, and works on a real directory.
func TestACL(t *testing.T) {
	t.Parallel()
	base := []aclEntry{{aclUserObj, 7, aclUndefined}, {aclGroupObj, 5, aclUndefined}, {aclOther, 0, aclUndefined}}
	got := grantSearch(append([]aclEntry(nil), base...), 101)
	want := []aclEntry{{aclUserObj, 7, aclUndefined}, {aclUser, 1, 101}, {aclGroupObj, 5, aclUndefined}, {aclMask, 5, aclUndefined}, {aclOther, 0, aclUndefined}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("grantSearch = %v, want %v", got, want)
	}
	// Granting again changes nothing; the encoding round-trips.
	again := grantSearch(append([]aclEntry(nil), got...), 101)
	back, err := parseACL(encodeACL(again))
	if err != nil || fmt.Sprint(back) != fmt.Sprint(want) {
		t.Fatalf("again %v, round trip %v %v", again, back, err)
	}
	if _, err := parseACL([]byte{1, 0, 0, 0}); err == nil {
		t.Error("bad version accepted")
	}
	// On a real directory (root only: chown-free ACLs need no privilege,
	// but only root's test can check another user's access cheaply).
	dir := t.TempDir()
	if err := addSearchACL(dir, 0o700, 4242); err != nil {
		t.Skipf("filesystem without ACLs: %v", err)
	}
	fi, _ := os.Stat(dir)
	if fi.Mode().Perm() != 0o710 { // the mask shows as the group bits
		t.Errorf("mode after the ACL: %o", fi.Mode().Perm())
	}
}
