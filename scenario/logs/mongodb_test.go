package logs

import (
	"context"
	"regexp"
	"strconv"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/mongodb"
	"github.com/scalelab/scalelab/engine/sqlite"
	"github.com/scalelab/scalelab/setting"
)

// MongoDB runs the conformance suite on the provider's shared FerretDB
// server (SQLite backend), a database per test. Its operations take
// milliseconds (FerretDB's SQLite backend filters every query but one by
// _id in Go, over the whole collection), so it runs the default variant
// only, which covers the indexes on and, reopened, off; as a slow store it
// loads slowRecords records.
func init() {
	testEngines[mongodb.Name] = &testEngine{
		exec: execMongo,
		lags: func(set *setting.Set) bool { return set.Get(mongodb.KeyReadPref).String() != "primary" },
	}
}

// execMongo runs the suite's SQL statements (the two forms it uses) as
// updates and deletes of documents on the primary.
func execMongo(t *testing.T, c engine.Conn, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	coll := c.(*mongodb.Conn).Primary().Collection(mongoCollection)
	for _, s := range stmts {
		if m := sqlUpdate.FindStringSubmatch(s); m != nil {
			id, _ := strconv.ParseInt(m[3], 10, 64)
			r, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{{Key: m[1], Value: m[2]}}}})
			if err != nil || r.MatchedCount != 1 {
				t.Fatalf("%s: %+v, %v", s, r, err)
			}
			continue
		}
		if m := sqlDelete.FindStringSubmatch(s); m != nil {
			id, _ := strconv.ParseInt(m[1], 10, 64)
			r, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
			if err != nil || r.DeletedCount != 1 {
				t.Fatalf("%s: %+v, %v", s, r, err)
			}
			continue
		}
		t.Fatalf("execMongo: statement %q not understood", s)
	}
}

// TestMongoWordRegex checks that the search's regular expression matches
// what SQLite's LIKE '% ' || word || ' %' matches.
func TestMongoWordRegex(t *testing.T) {
	t.Parallel()
	db := openEnv(t, sqlite.Name).conn.(*sqlite.Conn).DB()
	messages := []string{
		"auth: kernel reported by host01", "kernel reported", "auth: kernel", "auth: KERNEL reported", "auth: Kernel\nreported",
		"auth: kernels reported", "auth: kernel: reported", "a ke%nel b", "a ke_nel b", "a kexnel b", "a k.rnel b", "a kernel  b",
		"x é y", "x É y", "x a+b y", "x ab y", "x  y", "x \n y", "x k\nl y", "x k l y",
	}
	words := []string{"kernel", "Kernel", "ke%nel", "ke_nel", "k.rnel", "é", "a+b", "", "_", "%", "k_l", "k%l"}
	for _, w := range words {
		re := regexp.MustCompile("(?s)" + wordRegex(w))
		for _, m := range messages {
			var like bool
			if err := db.QueryRow("SELECT ? LIKE '% ' || ? || ' %'", m, w).Scan(&like); err != nil {
				t.Fatal(err)
			}
			if got := re.MatchString(m); got != like {
				t.Errorf("word %q in %q: regex %q matches %t, LIKE %t", w, m, wordRegex(w), got, like)
			}
		}
	}
}
