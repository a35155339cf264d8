package bindcheck

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
)

func TestCheckFree(t *testing.T) {
	t.Parallel()
	if err := Check("127.0.0.1:0"); err != nil {
		t.Fatalf("a free port: %v", err)
	}
}

func TestCheckNamesHolder(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	port := ln.Addr().(*net.TCPAddr).Port
	err = Check(addr)
	if !errors.Is(err, ErrInUse) {
		t.Fatalf("Check(%s) = %v, want ErrInUse", addr, err)
	}
	want := fmt.Sprintf("port %d is held by pid %d", port, os.Getpid())
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	h, ok := HolderOf(port)
	if !ok || h.PID != os.Getpid() || h.Command == "" {
		t.Errorf("HolderOf(%d) = %+v %v, want this process", port, h, ok)
	}
}

func TestHolderOfNone(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if h, ok := HolderOf(port); ok {
		t.Errorf("a closed port is held by %v", h)
	}
}
