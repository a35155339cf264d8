package sysuser

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"

	"golang.org/x/sys/unix"
)

// POSIX ACLs as Linux stores them in the system.posix_acl_access extended
// attribute (linux/posix_acl_xattr.h): a version word, then entries of tag,
// permission and id.
const (
	aclXattr     = "system.posix_acl_access"
	aclVersion   = 2
	aclUserObj   = 0x01
	aclUser      = 0x02
	aclGroupObj  = 0x04
	aclGroup     = 0x08
	aclMask      = 0x10
	aclOther     = 0x20
	aclUndefined = 0xffffffff
	aclExecute   = 1
)

type aclEntry struct {
	tag, perm uint16
	id        uint32
}

// addSearchACL grants uid search (execute) permission on the directory at
// path through an ACL entry, leaving every other permission as it was. It is
// what `setfacl -m u:UID:x PATH` does.
func addSearchACL(path string, mode os.FileMode, uid uint32) error {
	buf := make([]byte, 4096)
	n, err := unix.Getxattr(path, aclXattr, buf)
	var entries []aclEntry
	switch {
	case err == nil:
		if entries, err = parseACL(buf[:n]); err != nil {
			return err
		}
	case errors.Is(err, unix.ENODATA):
		entries = []aclEntry{
			{tag: aclUserObj, perm: uint16(mode>>6) & 7, id: aclUndefined},
			{tag: aclGroupObj, perm: uint16(mode>>3) & 7, id: aclUndefined},
			{tag: aclOther, perm: uint16(mode) & 7, id: aclUndefined},
		}
	default:
		return fmt.Errorf("read ACL: %w", err)
	}
	entries = grantSearch(entries, uid)
	if err := unix.Setxattr(path, aclXattr, encodeACL(entries), 0); err != nil {
		return fmt.Errorf("write ACL: %w", err)
	}
	return nil
}

// grantSearch adds execute permission for uid to an ACL, with the mask
// entry a named user needs (it keeps an existing mask, plus execute).
func grantSearch(entries []aclEntry, uid uint32) []aclEntry {
	found, hasMask := false, false
	var groupObj uint16
	for i := range entries {
		switch e := &entries[i]; e.tag {
		case aclUser:
			if e.id == uid {
				e.perm |= aclExecute
				found = true
			}
		case aclGroupObj:
			groupObj = e.perm
		}
	}
	if !found {
		entries = append(entries, aclEntry{tag: aclUser, perm: aclExecute, id: uid})
	}
	for i := range entries {
		if entries[i].tag == aclMask {
			entries[i].perm |= aclExecute
			hasMask = true
		}
	}
	if !hasMask {
		entries = append(entries, aclEntry{tag: aclMask, perm: groupObj | aclExecute, id: aclUndefined})
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].tag != entries[j].tag {
			return entries[i].tag < entries[j].tag
		}
		return entries[i].id < entries[j].id
	})
	return entries
}

func parseACL(b []byte) ([]aclEntry, error) {
	if len(b) < 4 || binary.LittleEndian.Uint32(b) != aclVersion || (len(b)-4)%8 != 0 {
		return nil, errors.New("unrecognised ACL")
	}
	var out []aclEntry
	for p := 4; p < len(b); p += 8 {
		out = append(out, aclEntry{tag: binary.LittleEndian.Uint16(b[p:]), perm: binary.LittleEndian.Uint16(b[p+2:]), id: binary.LittleEndian.Uint32(b[p+4:])})
	}
	return out, nil
}

func encodeACL(entries []aclEntry) []byte {
	b := make([]byte, 4+8*len(entries))
	binary.LittleEndian.PutUint32(b, aclVersion)
	for i, e := range entries {
		p := 4 + 8*i
		binary.LittleEndian.PutUint16(b[p:], e.tag)
		binary.LittleEndian.PutUint16(b[p+2:], e.perm)
		binary.LittleEndian.PutUint32(b[p+4:], e.id)
	}
	return b
}
