package records

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
)

// SeedPassword is every seeded user's password (hashed once per load at
// records.bcrypt_cost: hashing 15,000 passwords would take minutes).
const SeedPassword = "seed-password-1"

var (
	syllables = []string{"ka", "lo", "mi", "ra", "ten", "sor", "vi", "del", "mar", "no", "bel", "tu", "gan", "phi", "ros", "ule"}
	firsts    = []string{"Ada", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea", "Max", "Nia", "Oti", "Pia"}
)

// surname is the i-th surname: three syllables, 4,096 in all.
func surname(i int) string {
	s := syllables[i%16] + syllables[(i/16)%16] + syllables[(i/256)%16]
	return strings.ToUpper(s[:1]) + s[1:]
}

// providerName and patientName are the seeded users' names: a surname
// first (what search matches) then a first name.
func providerName(i int) string { return "Dr " + surname(i*7+3) + " " + firsts[i%16] }
func patientName(i int) string  { return surname(i*11+5) + " " + firsts[(i/3)%16] }

// providerID and patientID are the seeded users' ids: providers first.
func providerID(i int) int64           { return int64(i) + 1 }
func patientID(providers, i int) int64 { return int64(providers+i) + 1 }

// seededProvider is the provider patient i grants access to in the seed.
func seededProvider(providers, i int) int { return (i*7919 + 13) % providers }

// randomText is n random letters (the record's fields, as the study's
// random 15-character strings).
func randomText(r *rand.Rand, n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}

// seed loads providers, patients and one grant per patient in batches,
// reporting progress.
func (w *workload) seed(ctx context.Context, hash string, progress func(int64)) error {
	const batch = 500
	now := int64(1_735_689_600_000) // 2025-01-01, the seed's time
	type user struct {
		id          int64
		role, name  string
		email, hash string
	}
	flush := func(us []user) error {
		if len(us) == 0 {
			return nil
		}
		var q strings.Builder
		q.WriteString("INSERT INTO rc_users (id, role, name, email, pw_hash, updated_at) VALUES ")
		args := make([]any, 0, len(us)*6)
		for i, u := range us {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?, ?, ?, ?)")
			args = append(args, u.id, u.role, u.name, u.email, u.hash, now)
		}
		if _, err := w.st.db.exec(ctx, q.String(), args...); err != nil {
			return fmt.Errorf("seed users: %w", err)
		}
		progress(int64(len(us)))
		return nil
	}
	var us []user
	for i := range w.cfg.providers {
		us = append(us, user{providerID(i), RoleProvider, providerName(i), fmt.Sprintf("provider%d@records.test", i), hash})
		if len(us) == batch {
			if err := flush(us); err != nil {
				return err
			}
			us = us[:0]
		}
	}
	for i := range w.cfg.patients {
		us = append(us, user{patientID(w.cfg.providers, i), RolePatient, patientName(i), fmt.Sprintf("patient%d@records.test", i), hash})
		if len(us) == batch {
			if err := flush(us); err != nil {
				return err
			}
			us = us[:0]
		}
	}
	if err := flush(us); err != nil {
		return err
	}
	for start := 0; start < w.cfg.patients; start += batch {
		var q strings.Builder
		q.WriteString("INSERT INTO rc_grants (id, patient, provider, status, asked_by, created, updated) VALUES ")
		var args []any
		for i := start; i < min(start+batch, w.cfg.patients); i++ {
			if i > start {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?, 'granted', 'patient', ?, ?)")
			args = append(args, int64(i)+1, patientID(w.cfg.providers, i), providerID(seededProvider(w.cfg.providers, i)), now, now)
		}
		if _, err := w.st.db.exec(ctx, q.String(), args...); err != nil {
			return fmt.Errorf("seed grants: %w", err)
		}
		progress(int64(min(batch, w.cfg.patients-start)))
	}
	if w.st.db.dialect() == "postgres" {
		// the identity columns continue after the seeded ids
		for _, t := range []string{"rc_users", "rc_grants"} {
			if _, err := w.st.db.exec(ctx, "SELECT setval(pg_get_serial_sequence('"+t+"', 'id'), (SELECT max(id) FROM "+t+"))"); err != nil {
				return fmt.Errorf("seed %s: %w", t, err)
			}
		}
		if _, err := w.st.db.exec(ctx, "ANALYZE rc_users"); err != nil {
			return fmt.Errorf("analyze: %w", err)
		}
		if _, err := w.st.db.exec(ctx, "ANALYZE rc_grants"); err != nil {
			return fmt.Errorf("analyze: %w", err)
		}
	}
	return nil
}
