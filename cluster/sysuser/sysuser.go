// Package sysuser runs the servers scalelab starts as a system user when
// scalelab itself runs as root (PostgreSQL refuses root, and no server
// should have it): it finds the user, starts commands as that user, gives
// it files and directories, and lets it reach a directory below paths
// only root may enter.
package sysuser

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// User is the system user servers run as. A nil *User means scalelab is
// not root and the servers run as the current user: every method is then
// a no-op that runs or returns things as they are.
type User struct {
	name     string
	uid, gid uint32
	groups   []uint32
	setpriv  string // path of setpriv, which starts the long-lived servers as this user
	creds    *syscall.Credential
}

// ForServer returns nil when scalelab is not root, else the system user
// name (such as postgres or redis) that server runs as; the error says
// how to create it (install).
func ForServer(name, server, install string) (*User, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("scalelab runs as root and runs %s as the %q system user, which is missing (%s creates it): %w", server, name, install, err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	su := &User{name: u.Username, uid: uint32(uid), gid: uint32(gid)}
	if gids, err := u.GroupIds(); err == nil {
		for _, g := range gids {
			if n, err := strconv.ParseUint(g, 10, 32); err == nil {
				su.groups = append(su.groups, uint32(n))
			}
		}
	}
	if su.setpriv, err = exec.LookPath("setpriv"); err != nil {
		return nil, fmt.Errorf("scalelab runs as root and starts %s as %s with setpriv (util-linux), which is missing: %w", server, name, err)
	}
	su.creds = &syscall.Credential{Uid: su.uid, Gid: su.gid, Groups: su.groups}
	return su, nil
}

// Name is the user's name ("" for nil).
func (u *User) Name() string {
	if u == nil {
		return ""
	}
	return u.name
}

// Wrap prefixes a server command so that it runs as the user.
func (u *User) Wrap(cmd []string) []string {
	if u == nil {
		return cmd
	}
	return append([]string{u.setpriv, "--reuid=" + strconv.Itoa(int(u.uid)), "--regid=" + strconv.Itoa(int(u.gid)), "--init-groups", "--"}, cmd...)
}

// Own gives path to the user.
func (u *User) Own(path string) error {
	if u == nil {
		return nil
	}
	return os.Chown(path, int(u.uid), int(u.gid))
}

// Mkdir creates a directory owned by the user, mode 0700.
func (u *User) Mkdir(path string) error {
	if err := os.Mkdir(path, 0o700); err != nil {
		return err
	}
	return u.Own(path)
}

// Run executes a short command as the user in dir, its output appended to
// log; the error quotes the output's end.
func (u *User) Run(ctx context.Context, dir, log string, env []string, args ...string) error {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if u != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.creds}
	}
	err := cmd.Run()
	if lf, lerr := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); lerr == nil {
		fmt.Fprintf(lf, "$ %s\n%s", strings.Join(args, " "), out.Bytes())
		lf.Close()
	}
	if err != nil {
		msg := strings.TrimSpace(out.String())
		if len(msg) > 600 {
			msg = "..." + msg[len(msg)-600:]
		}
		return fmt.Errorf("%s: %w: %s", filepath.Base(args[0]), err, msg)
	}
	return nil
}

// Reachable makes dir reachable by the user: every ancestor the user cannot
// search gets an ACL entry granting that user (only) search permission.
func (u *User) Reachable(ctx context.Context, dir string) error {
	if u == nil {
		return nil
	}
	probe := func() error {
		return u.Run(ctx, "/", os.DevNull, nil, "/bin/sh", "-c", `cd "$1"`, "sh", dir)
	}
	if probe() == nil {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	var paths []string
	for p := abs; ; p = filepath.Dir(p) {
		paths = append(paths, p)
		if p == "/" {
			break
		}
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid == u.uid || fi.Mode().Perm()&0o001 != 0 {
			continue
		}
		if err := addSearchACL(p, fi.Mode().Perm(), u.uid); err != nil {
			return fmt.Errorf("let %s reach %s: granting search permission on %s: %w (set SCALELAB_HOME to a directory %s can reach)", u.name, dir, p, err, u.name)
		}
	}
	if err := probe(); err != nil {
		return fmt.Errorf("%s cannot reach %s even after granting search permission (set SCALELAB_HOME to a directory it can reach): %w", u.name, dir, err)
	}
	return nil
}
