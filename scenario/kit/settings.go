package kit

import (
	"fmt"

	"github.com/scalelab/scalelab/httpload"
	"github.com/scalelab/scalelab/setting"
)

// Between returns a setting check for a float strictly between lo and hi.
func Between(lo, hi float64) func(setting.Value) error {
	return func(v setting.Value) error {
		if f := v.Float(); f <= lo || f >= hi {
			return fmt.Errorf("must be strictly between %g and %g", lo, hi)
		}
		return nil
	}
}

// AppURL checks the setting of an application's URL (empty: none) when
// the setting is read, before a run starts: http or https, a host, no
// user or password.
func AppURL(v setting.Value) error {
	if v.String() == "" {
		return nil
	}
	_, err := httpload.Base(v.String())
	return err
}

// RequireSettings checks that the resolved settings hold every setting the
// scenario declares (the runner resolves them; a missing one is a bug of
// the caller), naming the first missing key.
func RequireSettings(scenario string, set *setting.Set, specs []setting.Spec) error {
	if set == nil {
		return fmt.Errorf("%s: no settings", scenario)
	}
	for _, sp := range specs {
		if !set.Has(sp.Key) {
			return fmt.Errorf("%s: setting %s missing from the resolved settings", scenario, sp.Key)
		}
	}
	return nil
}
