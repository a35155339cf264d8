package experiment

import (
	"os"
	"path/filepath"
	"testing"

	_ "github.com/scalelab/scalelab/engine/cassandra" // the server stores of the studies' examples
	_ "github.com/scalelab/scalelab/engine/mongodb"
	_ "github.com/scalelab/scalelab/engine/postgres"
	_ "github.com/scalelab/scalelab/engine/search"
	_ "github.com/scalelab/scalelab/scenario/logs"
)

// TestStudyExamplesValidate: the examples on server stores validate with
// every profile: the log study's stores (PostgreSQL, OpenSearch or
// Elasticsearch, Cassandra's three arms), the social study on FerretDB and
// its sharded profile, the mHealth study's configurations and user scaling.
func TestStudyExamplesValidate(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"logs-stores.yaml", "social-mongodb.yaml", "mhealth-users.yaml", "mhealth-config.yaml"} {
		f := filepath.Join("..", "examples", name)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Parse(f, b, "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, p := range append([]string{""}, s.Profiles...) {
			ps, err := Parse(f, b, p)
			if err != nil {
				t.Errorf("%s --profile %q: %v", name, p, err)
				continue
			}
			if err := ps.Validate(); err != nil {
				t.Errorf("%s --profile %q: %v", name, p, err)
			}
		}
	}
}
