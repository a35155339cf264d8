package httpload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ErrUnreachable means an application did not answer at all (nothing
// listens, the name does not resolve, no answer within the timeout).
var ErrUnreachable = errors.New("application unreachable")

// Reachable asks the application at base for path (its health path) once,
// before a run's load, as the engines are asked when they connect: an
// error wrapping ErrUnreachable when nothing answers, an error with the
// status when it answers anything but 200.
func Reachable(ctx context.Context, base, path string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := strings.TrimSuffix(base, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the method and URL said below
		}
		return fmt.Errorf("%w: GET %s: %w", ErrUnreachable, u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return fmt.Errorf("GET %s answered %s: %s", u, resp.Status, strings.TrimSpace(string(b)))
	}
	return nil
}
