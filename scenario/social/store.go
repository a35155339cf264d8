package social

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/scalelab/scalelab/engine"
)

// The users collection: a user is a record of these fields (the document
// of the study, field by field), its key the user's `_id`. Numbers are
// stored as decimal text. An update writes status and last_seen.
var userFields = []string{"name", "handle", "email", "bio", "city", "country", "birth_year", "joined", "last_seen", "status", "photos", "avatar"}

// Field numbers in userFields.
const (
	fName = iota
	fHandle
	fEmail
	fBio
	fCity
	fCountry
	fBirthYear
	fJoined
	fLastSeen
	fStatus
	fPhotos
	fAvatar
	numFields
)

// updateFields are the fields an update writes.
var updateFields = []int{fLastSeen, fStatus}

// usersCollection is the collection's name.
const usersCollection = "social_users"

// store keeps users in an engine's records (engine.Collection). Its
// methods are safe for concurrent use.
type store struct {
	c engine.Collection
}

// values returns u's fields as record values.
func values(u *User) [][]byte {
	v := make([][]byte, numFields)
	v[fName], v[fHandle], v[fEmail], v[fBio] = []byte(u.Name), []byte(u.Handle), []byte(u.Email), []byte(u.Bio)
	v[fCity], v[fCountry], v[fStatus], v[fAvatar] = []byte(u.City), []byte(u.Country), []byte(u.Status), []byte(u.Avatar)
	v[fBirthYear] = strconv.AppendInt(nil, int64(u.BirthYear), 10)
	v[fJoined] = strconv.AppendInt(nil, u.Joined, 10)
	v[fLastSeen] = strconv.AppendInt(nil, u.LastSeen, 10)
	v[fPhotos] = strconv.AppendInt(nil, int64(u.Photos), 10)
	return v
}

// userFrom fills u from row i of rows; a row without a name is no user.
func userFrom(rows *engine.Rows, i int, u *User) error {
	str := func(f int) string { v, _ := rows.Value(i, f); return string(v) }
	num := func(f int) (int64, error) {
		v, ok := rows.Value(i, f)
		if !ok {
			return 0, nil
		}
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: user %s: %s is %q, not a number", engine.ErrIntegrity, rows.Key(i), userFields[f], v)
		}
		return n, nil
	}
	if _, ok := rows.Value(i, fName); !ok {
		return fmt.Errorf("user %s has no name: %w", rows.Key(i), engine.ErrNotFound)
	}
	*u = User{ID: string(rows.Key(i)), Name: str(fName), Handle: str(fHandle), Email: str(fEmail), Bio: str(fBio),
		City: str(fCity), Country: str(fCountry), Status: str(fStatus), Avatar: str(fAvatar)}
	var err error
	var by, photos int64
	if by, err = num(fBirthYear); err != nil {
		return err
	}
	if u.Joined, err = num(fJoined); err != nil {
		return err
	}
	if u.LastSeen, err = num(fLastSeen); err != nil {
		return err
	}
	if photos, err = num(fPhotos); err != nil {
		return err
	}
	u.BirthYear, u.Photos = int(by), int(photos)
	return nil
}

func (s *store) read(ctx context.Context, key string, u *User) error {
	var rows engine.Rows
	rows.Reset(numFields)
	if err := s.c.Get(ctx, []byte(key), engine.AllFields, &rows); err != nil {
		return err
	}
	if rows.Len() == 0 { // a store that keeps nothing (null)
		*u = User{ID: key}
		return nil
	}
	return userFrom(&rows, 0, u)
}

// readBack reads users from where every acknowledged write is seen,
// without injected faults (the audit); a user the store does not hold is
// absent from the result.
func (s *store) readBack(ctx context.Context, keys []string) (map[string]User, error) {
	ks := make([][]byte, len(keys))
	for i, k := range keys {
		ks[i] = []byte(k)
	}
	var rows engine.Rows
	rows.Reset(numFields)
	if err := s.c.ReadBack(ctx, ks, engine.AllFields, &rows); err != nil {
		return nil, err
	}
	out := make(map[string]User, rows.Len())
	for i := range rows.Len() {
		var u User
		err := userFrom(&rows, i, &u)
		if errors.Is(err, engine.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[u.ID] = u
	}
	return out, nil
}

func (s *store) update(ctx context.Context, key, status string, lastSeen int64) error {
	v := make([][]byte, numFields)
	v[fStatus], v[fLastSeen] = []byte(status), strconv.AppendInt(nil, lastSeen, 10)
	return s.c.Update(ctx, []byte(key), updateFields, v)
}

func (s *store) insert(ctx context.Context, u *User) error {
	return s.c.Insert(ctx, []byte(u.ID), values(u))
}

func (s *store) remove(ctx context.Context, key string) error {
	return s.c.Delete(ctx, []byte(key))
}

// scan calls fn for up to n users with keys >= start.
func (s *store) scan(ctx context.Context, start string, n int, fn func(u *User) error) error {
	var rows engine.Rows
	rows.Reset(numFields)
	if err := s.c.Scan(ctx, []byte(start), n, engine.AllFields, &rows); err != nil {
		return err
	}
	var u User
	for i := range rows.Len() {
		if err := userFrom(&rows, i, &u); err != nil {
			return err
		}
		if err := fn(&u); err != nil {
			return err
		}
	}
	return nil
}

func (s *store) insertBatch(ctx context.Context, users []User) error {
	b := engine.NewBatch(numFields, len(users))
	for i := range users {
		b.Keys[i] = []byte(users[i].ID)
		copy(b.Row(i), values(&users[i]))
	}
	b.N = len(users)
	return s.c.InsertBatch(ctx, b)
}

func (s *store) afterLoad(ctx context.Context) error      { return s.c.AfterLoad(ctx) }
func (s *store) count(ctx context.Context) (int64, error) { return s.c.Count(ctx) }

func (s *store) maxKey(ctx context.Context) (string, error) {
	k, err := s.c.MaxKey(ctx)
	return string(k), err
}

func (s *store) close() error { return s.c.Close() }
