package social

import (
	"github.com/scalelab/scalelab/scenario/kit"

	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/scalelab/scalelab/cache"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/scenario"
)

// Session is one virtual user: a thread of the study's patched YCSB. With
// the social chooser it walks the friendship graph: it starts at a random
// user, and each next user is a friend of the current one with probability
// social.locality, else a uniform jump.
type Session struct {
	w        *Workload
	st       *store
	r        kit.RNG
	quota    kit.SessionOps
	prepared bool
	op       int
	n        uint64 // user number of the prepared operation
	key      string
	status   string
	lastSeen int64
	scanN    int
	cur      uint64 // the walk's current user
	started  bool   // the walk has a current user
	u        User
	rlog     scenario.RegisterLog // the acknowledged-write audit (audit.go); nil when off

	// With a cache (cache.go): what it did for the operation, the user's
	// record, its encoded entry, and the session's last acknowledged
	// update of each user it remembers.
	ev      cache.Event
	rows    engine.Rows
	enc     []byte
	written map[uint64]lastWrite
}

var _ scenario.Session = (*Session)(nil)

// NewSession returns a session whose choices derive from seed alone.
func (w *Workload) NewSession(id uint64, seed uint64) scenario.Session {
	return &Session{w: w, st: w.st, r: kit.NewRNG(seed), quota: kit.NewSessionOps(w.cfg.sessionOps)}
}

// Next chooses the next operation and its user; it returns ok=false once
// the session has done social.session_ops operations.
func (s *Session) Next() (op int, ok bool) {
	if !s.quota.Take() {
		return 0, false
	}
	op = s.w.ops.Next(&s.r)
	s.op, s.prepared = op, true
	switch op {
	case OpRead, OpDelete:
		s.pick()
	case OpUpdate:
		s.pick()
		s.status = randomWords(&s.r, 2, 8)
		s.lastSeen = Epoch.UnixMilli() + fiveYearsMs + int64(s.r.Intn(fiveYearsMs))
	case OpScan:
		s.pick()
		s.scanN = 1 + int(s.r.Intn(uint64(s.w.cfg.maxScan)))
	case OpInsert:
		// The user number is taken in Do, so that an operation prepared
		// but never done leaves no hole in the key space.
	}
	return op, true
}

var errNotPrepared = errors.New("social: Session.Do called without Next")

// Do performs the operation Next prepared. Errors name the operation and
// user and keep the engine's class: a user that is not there is not_found
// (and, for a loaded user that was never deleted, an integrity error: a
// lost write); a read returning another user's document is an integrity
// error.
func (s *Session) Do(ctx context.Context) error {
	if !s.prepared {
		return errNotPrepared
	}
	s.prepared = false
	s.ev = cache.Event{}
	c := s.w.cache
	var err error
	switch s.op {
	case OpRead:
		if c != nil {
			err = s.cachedRead(ctx)
		} else {
			err = s.st.read(ctx, s.key, &s.u)
		}
		if err == nil {
			err = s.w.verify(s.n, &s.u)
		}
		err = s.missing(err)
	case OpUpdate:
		if c != nil {
			err = s.missing(s.cachedUpdate(ctx, s.status))
			break
		}
		status := s.status
		if s.rlog != nil {
			status = stamped(status, s.rlog.Updating(int64(s.n), false))
		}
		err = s.missing(s.st.update(ctx, s.key, status, s.lastSeen))
	case OpInsert:
		err = s.insert(ctx)
	case OpDelete:
		err = s.remove(ctx)
	case OpScan:
		err = s.scan(ctx)
	}
	if c != nil && (s.op == OpRead || s.op == OpUpdate || s.op == OpDelete) {
		c.Stats.Record(operationNames[s.op], s.ev)
	}
	if err != nil {
		return fmt.Errorf("social %s %s: %w", operationNames[s.op], s.key, err)
	}
	return nil
}

// missing classes a not-found user: deleted meanwhile, or an insert not yet
// visible (both not_found), or a loaded user never deleted (a lost write).
func (s *Session) missing(err error) error {
	if !errors.Is(err, engine.ErrNotFound) {
		return err
	}
	switch {
	case s.w.ks.isGone(s.n):
		s.w.notFoundGone.Add(1)
	case s.n >= s.w.cfg.users:
		s.w.notFoundInserted.Add(1)
	case s.w.cfg.load && s.w.strict:
		return fmt.Errorf("%w: user %s was loaded and never deleted but is missing (%w)", engine.ErrIntegrity, s.key, err)
	}
	return err
}

func (s *Session) insert(ctx context.Context) error {
	s.n = s.w.ks.take()
	s.u = NewUser(s.w.seed, s.n)
	s.key = s.u.ID
	if s.rlog != nil {
		s.u.Status = stamped(s.u.Status, s.rlog.Inserting(int64(s.n)))
	}
	err := s.st.insert(ctx, &s.u)
	s.w.ks.settle(s.n, err == nil)
	if err != nil {
		s.w.insertsFailed.Add(1)
		return err
	}
	s.w.insertsOK.Add(1)
	return nil
}

func (s *Session) remove(ctx context.Context) error {
	w := s.w
	first := w.ks.markGone(s.n) // before the request: no session picks it any more
	w.ks.attemptDelete(s.n)
	if s.rlog != nil {
		s.rlog.Updating(int64(s.n), true)
	}
	err := s.ev.TimeStore(func() error { return s.st.remove(ctx, s.key) })
	if w.cache != nil { // whatever the store answered: a deleted user must not be served
		s.invalidate(ctx)
	}
	switch {
	case err == nil && (first || w.tellsMissing):
		// One delete of a user succeeds where the store tells a missing
		// user; else the first session to pick it counts.
		w.deletesOK.Add(1)
	case err == nil:
		w.deletesMissing.Add(1)
	case errors.Is(err, engine.ErrNotFound):
		w.deletesMissing.Add(1)
		// Read after the result: a racing delete of the same user has
		// counted itself before it was sent.
		if w.ks.deleteAttempts(s.n) == 1 && s.n < w.cfg.users && w.cfg.load && w.strict {
			return fmt.Errorf("%w: user %s was loaded and never deleted but is missing (%w)", engine.ErrIntegrity, s.key, err)
		}
	default:
		w.deletesFailed.Add(1)
	}
	return err
}

// scan reads up to scanN users from the chosen one and checks that they
// come in key order from it (where the store scans in key order), each the
// user its key names.
func (s *Session) scan(ctx context.Context) error {
	prev := ""
	rows := 0
	return s.st.scan(ctx, s.key, s.scanN, func(u *User) error {
		rows++
		if rows > s.scanN {
			return fmt.Errorf("%w: scan of %d returned more rows", engine.ErrIntegrity, s.scanN)
		}
		if s.w.keyOrdered && (strings.Compare(u.ID, s.key) < 0 || (prev != "" && strings.Compare(u.ID, prev) <= 0)) {
			return fmt.Errorf("%w: scan from %s returned %s after %q", engine.ErrIntegrity, s.key, u.ID, prev)
		}
		prev = u.ID
		n, ok := KeyNumber(u.ID)
		if !ok {
			return fmt.Errorf("%w: scan returned a document with _id %q", engine.ErrIntegrity, clip(u.ID))
		}
		return s.w.verify(n, u)
	})
}

// maxRedraws bounds the draws that avoid users known to be gone.
const maxRedraws = 100

// pick chooses the user of a read, update, delete or scan.
func (s *Session) pick() {
	switch s.w.cfg.keys {
	case KeysSocial:
		s.n = s.walk()
	case KeysZipfian:
		s.n = s.redraw(func() uint64 { return kit.Mix64(s.w.zipf.Next(&s.r)^0x5eed) % s.w.cfg.users })
	default:
		s.n = s.uniform()
	}
	s.key = Key(s.n)
}

// redraw draws until the user is not gone (at most maxRedraws times).
func (s *Session) redraw(draw func() uint64) uint64 {
	n := draw()
	for i := 0; i < maxRedraws && s.w.ks.isGone(n); i++ {
		n = draw()
	}
	return n
}

// uniform draws uniformly among the users loaded or inserted so far.
func (s *Session) uniform() uint64 {
	size := max(s.w.ks.size(), 1)
	return s.redraw(func() uint64 { return s.w.ks.user(s.r.Intn(size)) })
}

// friendTries is how many friends a step tries before it gives up on the
// current user's friends (all deleted) and jumps.
const friendTries = 4

// walk takes one step of the friend walk and returns the new current user.
func (s *Session) walk() uint64 {
	w := s.w
	if !s.started {
		s.started = true
		w.starts.Add(1)
		s.cur = s.uniform()
		return s.cur
	}
	if s.r.Float64() < w.cfg.locality {
		if s.cur < uint64(w.graph.Nodes()) {
			if friends := w.graph.Friends(int(s.cur)); len(friends) > 0 {
				for range friendTries {
					f := uint64(friends[s.r.Intn(uint64(len(friends)))])
					if !w.ks.isGone(f) {
						w.friendSteps.Add(1)
						s.cur = f
						return f
					}
				}
			}
		}
		w.deadEnds.Add(1) // no live friend found (or an inserted user, outside the graph): jump
	} else {
		w.jumps.Add(1)
	}
	s.cur = s.uniform()
	return s.cur
}
