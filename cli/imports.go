package cli

// Engines, scenarios, the app tier's provisioner and the stacks of several engines (FerretDB on PostgreSQL) register themselves from init; importing them here
// is the only edit adding one needs outside its own package.
import (
	_ "github.com/scalelab/scalelab/apptier"
	_ "github.com/scalelab/scalelab/engine/cassandra"
	_ "github.com/scalelab/scalelab/engine/memcached"
	_ "github.com/scalelab/scalelab/engine/memory"
	_ "github.com/scalelab/scalelab/engine/mongodb"
	_ "github.com/scalelab/scalelab/engine/null"
	_ "github.com/scalelab/scalelab/engine/postgres"
	_ "github.com/scalelab/scalelab/engine/redis"
	_ "github.com/scalelab/scalelab/engine/search"
	_ "github.com/scalelab/scalelab/engine/sqlite"
	_ "github.com/scalelab/scalelab/scenario/logs"
	_ "github.com/scalelab/scalelab/scenario/mhealth"
	_ "github.com/scalelab/scalelab/scenario/records"
	_ "github.com/scalelab/scalelab/scenario/search"
	_ "github.com/scalelab/scalelab/scenario/social"
	_ "github.com/scalelab/scalelab/scenario/ycsb"
	_ "github.com/scalelab/scalelab/stack/ferretdb"
)
