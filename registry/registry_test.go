package registry

import (
	"strings"
	"testing"
)

func TestRegistry(t *testing.T) {
	t.Parallel()
	r := New[int]("engine")
	r.Register("sqlite", 1)
	r.Register("postgres", 2)
	if v, err := r.Lookup("postgres"); err != nil || v != 2 {
		t.Fatalf("Lookup = %d, %v", v, err)
	}
	_, err := r.Lookup("postgre")
	if err == nil || !strings.Contains(err.Error(), `unknown engine "postgre"`) || !strings.Contains(err.Error(), `did you mean "postgres"`) || !strings.Contains(err.Error(), "postgres, sqlite") {
		t.Fatalf("error %v", err)
	}
	if got := strings.Join(r.Names(), ","); got != "postgres,sqlite" {
		t.Fatalf("Names = %s", got)
	}
	for _, name := range []string{"", "sqlite"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", name)
				}
			}()
			r.Register(name, 3)
		}()
	}
}
