package promtest

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// Query evaluates an instant query now and returns its one value (the
// first sample of a vector, or a scalar).
func (s *Server) Query(ctx context.Context, q string) (float64, error) {
	c, err := api.NewClient(api.Config{Address: s.URL})
	if err != nil {
		return 0, err
	}
	v, _, err := v1.NewAPI(c).Query(ctx, q, time.Now())
	if err != nil {
		return 0, fmt.Errorf("query %s: %w", q, err)
	}
	switch x := v.(type) {
	case model.Vector:
		if len(x) == 0 {
			return 0, fmt.Errorf("query %s: no series", q)
		}
		return float64(x[0].Value), nil
	case *model.Scalar:
		return float64(x.Value), nil
	}
	return 0, fmt.Errorf("query %s: a %s", q, v.Type())
}
