package records

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/scalelab/scalelab/cache"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/httpload"
	"github.com/scalelab/scalelab/scenario"
)

// Operations: one HTTP request each.
const (
	OpHome = iota
	OpSignupPage
	OpSignup
	OpMedicalPage
	OpMedicalPost
	OpProvidersPage
	OpSearchProviders
	OpShare
	OpProfile
	OpMyProviders
	OpLoginPage
	OpLogin
	OpViewRecord
	OpRevoke
	OpCheckRevoked
	OpDeleteAccount
	OpCheckDeleted
	OpCSRFProbe
	OpMyPatients
	OpSearchPatients
	OpRequestAccess
	OpViewDenied
	OpAnswerRequest
	OpFindPatient
	OpCheckSearchDeleted
	numOps
)

var opNames = []string{"home", "signup_page", "signup", "medical_page", "medical_post", "providers_page", "search_providers", "share",
	"profile", "my_providers", "login_page", "login", "view_record", "revoke", "check_revoked", "delete_account", "check_deleted",
	"csrf_probe", "my_patients", "search_patients", "request_access", "view_denied", "answer_request",
	"find_patient", "check_search_deleted"}

// Audit registers: a signed-up user's row and each grant a session makes,
// keyed from the session id (unique in the run, segments included).
const (
	userKeyBase  int64 = 1 << 32
	grantKeyBase int64 = 1 << 34
)

// thinkKind is the pause before a step.
type thinkKind int

const (
	thinkNone thinkKind = iota // a check by another user's browser
	thinkPage                  // up to records.think_page
	thinkForm                  // up to records.think_form
)

// step is one request of a session's path.
type step struct {
	op    int
	think thinkKind
	do    func(ctx context.Context) error
}

// session is one virtual user (and, for the access checks, a provider's
// browser beside it).
type session struct {
	w     *workload
	id    int64
	rng   *rand.Rand
	me    *httpload.User
	other *httpload.User // a provider checking what they can see
	log   scenario.WriteLog
	steps []step
	next  int
	cur   step

	token     string // the last form page's CSRF token
	uid, gid  int64  // the patient signed up, the grant shared
	provider  int64  // the provider shared with (and checking)
	provIndex int
	uver      bool   // the user's register was written
	gver      bool   // the grant's register was written
	name      string // the patient's name
	allergies string // the record's allergies as last posted
}

var (
	_ scenario.Session = (*session)(nil)
	_ scenario.Thinker = (*session)(nil)
	_ scenario.Audited = (*session)(nil)
)

func newSession(w *workload, id, seed uint64) *session {
	s := &session{w: w, id: int64(id), rng: rand.New(rand.NewPCG(seed, id))}
	s.me = s.browser()
	if w.cfg.study {
		s.studyPath()
		return s
	}
	switch w.cfg.pick(s.rng.Float64()) {
	case kindProvider:
		s.providerPath()
	case kindReturning:
		s.returningPath()
	default:
		s.signupPath()
	}
	return s
}

// browser returns a new browser whose responses' cache headers are
// counted.
func (s *session) browser() *httpload.User {
	u := httpload.NewUser(s.w.base, s.w.counter, s.w.cfg.timeout)
	u.Observe = s.w.observe
	return u
}

// SetWriteLog receives the audit's log.
func (s *session) SetWriteLog(l scenario.WriteLog) { s.log = l }

// Next prepares the next step.
func (s *session) Next() (int, bool) {
	if s.next >= len(s.steps) {
		s.me.Close()
		if s.other != nil {
			s.other.Close()
		}
		return 0, false
	}
	s.cur = s.steps[s.next]
	s.next++
	return s.cur.op, true
}

// Think is the pause before the prepared step: up to think_page before a
// page, up to think_form before a form post (uniform), none before a
// check.
func (s *session) Think() (time.Duration, bool) {
	var max time.Duration
	switch s.cur.think {
	case thinkPage:
		max = s.w.cfg.thinkPage
	case thinkForm:
		max = s.w.cfg.thinkForm
	}
	if max <= 0 {
		return 0, true
	}
	return time.Duration(s.rng.Int64N(int64(max))), true
}

// Do runs the prepared step; a failed step ends the session's path where
// later steps need its result.
func (s *session) Do(ctx context.Context) error {
	err := s.cur.do(ctx)
	if err != nil && s.needed(s.cur.op) {
		s.next = len(s.steps)
	}
	return err
}

// needed reports whether later steps depend on op's success.
func (s *session) needed(op int) bool {
	switch op {
	case OpSignupPage, OpSignup, OpLoginPage, OpLogin, OpShare, OpMedicalPage, OpProfile:
		return true
	}
	return false
}

func (s *session) add(op int, t thinkKind, do func(ctx context.Context) error) {
	s.steps = append(s.steps, step{op: op, think: t, do: do})
}

// then inserts a step right after the current one (what a page just shown
// makes possible).
func (s *session) then(op int, t thinkKind, do func(ctx context.Context) error) {
	s.steps = append(s.steps[:s.next], append([]step{{op: op, think: t, do: do}}, s.steps[s.next:]...)...)
}

// register logs a write of a register before it is sent and returns the
// headers that carry its key and version to the site.
func (s *session) register(key int64, insert, del bool) map[string]string {
	rl, ok := s.log.(scenario.RegisterLog)
	if !ok {
		return nil
	}
	var v int64
	if insert {
		v = rl.Inserting(key)
	} else {
		v = rl.Updating(key, del)
	}
	return map[string]string{HeaderAuditKey: strconv.FormatInt(key, 10), HeaderAuditVersion: strconv.FormatInt(v, 10)}
}

func (s *session) userKey() int64  { return userKeyBase + s.id }
func (s *session) grantKey() int64 { return grantKeyBase + s.id }

// page gets a page and keeps its CSRF token; records.revisit of the
// views are followed by a reload of the page (the back button, a
// refresh), which the browser sends with the page's ETag.
func (s *session) page(op int, path string) { s.pageStep(op, path, true) }

// plainPage gets a page and keeps its CSRF token, never reloading it.
func (s *session) plainPage(op int, path string) { s.pageStep(op, path, false) }

// getPage gets path as op and keeps the page's CSRF token.
func (s *session) getPage(ctx context.Context, op int, path string) (*httpload.Page, error) {
	p, err := s.me.Get(ctx, opNames[op], path)
	if err != nil {
		return nil, err
	}
	if t := p.Token("csrf_token"); t != "" {
		s.token = t
	}
	return p, nil
}

func (s *session) pageStep(op int, path string, revisit bool) {
	var get func(ctx context.Context) error
	get = func(ctx context.Context) error {
		if _, err := s.getPage(ctx, op, path); err != nil {
			return err
		}
		if revisit && s.rng.Float64() < s.w.cfg.revisit {
			s.then(op, thinkPage, get)
		}
		return nil
	}
	s.add(op, thinkPage, get)
}

// leak is an integrity error: a page showed what it must not.
func leak(format string, a ...any) error {
	return fmt.Errorf("%w: %s", engine.ErrIntegrity, fmt.Sprintf(format, a...))
}

// signupPath: a new patient's visit, the study's path, with the access
// checks of a provider's browser after the revoke and the deletion.
func (s *session) signupPath() {
	s.page(OpHome, "/")
	s.page(OpSignupPage, "/signup")
	if s.rng.Float64() < s.w.cfg.csrfProbe {
		s.add(OpCSRFProbe, thinkForm, func(ctx context.Context) error {
			form := url.Values{"name": {"Probe"}, "email": {fmt.Sprintf("probe%d@records.test", s.id)}, "password": {"probe-password"}}
			p, err := s.me.Post(ctx, opNames[OpCSRFProbe], "/signup", form, nil, http.StatusForbidden)
			if err != nil && p != nil && p.Code < 400 {
				return leak("a sign-up posted without its CSRF token was accepted (status %d)", p.Code)
			}
			return err
		})
	}
	s.patientVisit(false)
	// the provider shared with signs in and reads the record
	var otherToken string
	s.add(OpLoginPage, thinkNone, func(ctx context.Context) error {
		s.other = s.browser()
		p, err := s.other.Get(ctx, opNames[OpLoginPage], "/login")
		if err != nil {
			return err
		}
		otherToken = p.Token("csrf_token")
		return nil
	})
	s.add(OpLogin, thinkNone, func(ctx context.Context) error {
		form := url.Values{"csrf_token": {otherToken}, "email": {fmt.Sprintf("provider%d@records.test", s.provIndex)}, "password": {SeedPassword}}
		_, err := s.other.Post(ctx, opNames[OpLogin], "/login", form, nil)
		return err
	})
	s.add(OpViewRecord, thinkNone, func(ctx context.Context) error {
		_, err := s.other.Get(ctx, opNames[OpViewRecord], "/patients/"+strconv.FormatInt(s.uid, 10))
		return err
	})
	// the provider looks the patient up by name (what a cache of search
	// results could keep past the account's deletion)
	s.add(OpFindPatient, thinkNone, func(ctx context.Context) error {
		_, err := s.other.Get(ctx, opNames[OpFindPatient], "/patients/search?q="+url.QueryEscape(s.name))
		return err
	})
	s.add(OpRevoke, thinkForm, func(ctx context.Context) error {
		form := url.Values{"csrf_token": {s.token}}
		_, err := s.me.Post(ctx, opNames[OpRevoke], "/grants/"+strconv.FormatInt(s.gid, 10)+"/revoke", form, s.register(s.grantKey(), false, false))
		return err
	})
	s.add(OpCheckRevoked, thinkNone, func(ctx context.Context) error {
		p, err := s.other.Get(ctx, opNames[OpCheckRevoked], "/patients/"+strconv.FormatInt(s.uid, 10), http.StatusForbidden)
		if err != nil && p != nil && p.Shown() {
			return leak("provider %d read patient %d's record after its grant was revoked", s.provider, s.uid)
		}
		return err
	})
	s.add(OpDeleteAccount, thinkForm, s.doDelete)
	s.add(OpCheckDeleted, thinkNone, func(ctx context.Context) error {
		p, err := s.other.Get(ctx, opNames[OpCheckDeleted], "/patients/"+strconv.FormatInt(s.uid, 10), http.StatusNotFound)
		if err != nil && p != nil && p.Shown() {
			return leak("provider %d read patient %d's record after the account was deleted", s.provider, s.uid)
		}
		return err
	})
	s.add(OpCheckSearchDeleted, thinkNone, func(ctx context.Context) error {
		p, err := s.other.Get(ctx, opNames[OpCheckSearchDeleted], "/patients/search?q="+url.QueryEscape(s.name))
		if err != nil || !strings.Contains(p.Body, fmt.Sprintf(`data-id="%d"`, s.uid)) {
			return err
		}
		if p.Header.Get(HeaderCache) == "hit" {
			return leak("a cached search showed provider %d patient %d after the account was deleted", s.provider, s.uid)
		}
		// read from the store (a replica behind the deletion): stale
		s.w.cacheStats.Record(opNames[OpCheckSearchDeleted], cache.Event{Stale: true})
		return nil
	})
}

var (
	dataIDs    = regexp.MustCompile(`data-id="(\d+)"`)
	grantItems = regexp.MustCompile(`data-grant="(\d+)" data-user="(\d+)" data-status="(\w+)"(?: data-audit="(\d+)")?`)
)

// login signs the session's browser in as email.
func (s *session) login(email string) {
	s.page(OpLoginPage, "/login")
	s.add(OpLogin, thinkForm, func(ctx context.Context) error {
		form := url.Values{"csrf_token": {s.token}, "email": {email}, "password": {SeedPassword}}
		_, err := s.me.Post(ctx, opNames[OpLogin], "/login", form, nil)
		return err
	})
}

// deniedPatient is a seeded patient no provider session ever asks and
// whose seeded grant is not to provider prov: its record must stay closed.
func (s *session) deniedPatient(prov int) int {
	for {
		j := s.rng.IntN(s.w.cfg.patients/4)*4 + 3
		if j < s.w.cfg.patients && seededProvider(s.w.cfg.providers, j) != prov {
			return j
		}
	}
}

// openPatient picks a seeded patient at random among those not kept for
// the check of a refused access (deniedPatient).
func (s *session) openPatient() int {
	j := s.rng.IntN(s.w.cfg.patients)
	if j%4 == 3 {
		j--
	}
	return j
}

// providerPath: a seeded provider signs in, reads a patient they hold a
// grant for, searches patients, asks one for access and tries a record
// they have no grant for (which must be refused).
func (s *session) providerPath() {
	prov := s.rng.IntN(s.w.cfg.providers)
	s.login(fmt.Sprintf("provider%d@records.test", prov))
	s.add(OpMyPatients, thinkPage, func(ctx context.Context) error {
		p, err := s.getPage(ctx, OpMyPatients, "/patients")
		if err != nil {
			return err
		}
		var granted []int64
		for _, m := range grantItems.FindAllStringSubmatch(p.Body, -1) {
			if m[3] == StatusGranted {
				id, _ := strconv.ParseInt(m[2], 10, 64)
				granted = append(granted, id)
			}
		}
		if len(granted) > 0 {
			id := granted[s.rng.IntN(len(granted))]
			s.then(OpViewRecord, thinkPage, func(ctx context.Context) error {
				_, err := s.me.Get(ctx, opNames[OpViewRecord], "/patients/"+strconv.FormatInt(id, 10))
				return err
			})
		}
		return nil
	})
	var asked int64
	s.add(OpSearchPatients, thinkPage, func(ctx context.Context) error {
		j := s.openPatient()
		asked = patientID(s.w.cfg.providers, j)
		_, err := s.me.Get(ctx, opNames[OpSearchPatients], "/patients/search?q="+url.QueryEscape(patientName(j)[:5]))
		return err
	})
	s.add(OpRequestAccess, thinkForm, func(ctx context.Context) error {
		form := url.Values{"csrf_token": {s.token}, "patient": {strconv.FormatInt(asked, 10)}}
		_, err := s.me.Post(ctx, opNames[OpRequestAccess], "/requests", form, s.register(s.grantKey(), true, false))
		return err
	})
	s.add(OpViewDenied, thinkPage, func(ctx context.Context) error {
		j := s.deniedPatient(prov)
		id := patientID(s.w.cfg.providers, j)
		p, err := s.me.Get(ctx, opNames[OpViewDenied], "/patients/"+strconv.FormatInt(id, 10), http.StatusForbidden)
		if err != nil && p != nil && p.Shown() {
			return leak("provider %d read patient %d's record without a grant", providerID(prov), id)
		}
		return err
	})
}

// returningPath: a seeded patient signs in, looks at who may see their
// record and answers a provider's request (accepts or declines it).
func (s *session) returningPath() {
	s.login(fmt.Sprintf("patient%d@records.test", s.openPatient()))
	s.add(OpMyProviders, thinkPage, func(ctx context.Context) error {
		p, err := s.getPage(ctx, OpMyProviders, "/my-providers")
		if err != nil {
			return err
		}
		for _, m := range grantItems.FindAllStringSubmatch(p.Body, -1) {
			if m[3] == StatusRequested {
				id, _ := strconv.ParseInt(m[1], 10, 64)
				akey, _ := strconv.ParseInt(m[4], 10, 64)
				s.then(OpAnswerRequest, thinkForm, func(ctx context.Context) error { return s.answer(ctx, id, akey) })
				break
			}
		}
		return nil
	})
}

// answer accepts or declines a provider's request: an update of the
// grant's register (akey, written by the provider's session; 0 when the
// grant is not audited).
func (s *session) answer(ctx context.Context, id, akey int64) error {
	action := "accept"
	if s.rng.IntN(2) == 0 {
		action = "decline"
	}
	var h map[string]string
	if akey != 0 {
		h = s.register(akey, false, false)
	}
	_, err := s.me.Post(ctx, opNames[OpAnswerRequest], "/grants/"+strconv.FormatInt(id, 10)+"/"+action, url.Values{"csrf_token": {s.token}}, h)
	var se *httpload.StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound {
		// answered meanwhile by another visit of the same patient: the
		// site changed nothing
		if rl, ok := s.log.(scenario.RegisterLog); ok && h != nil {
			rl.NotApplied()
		}
		return nil
	}
	return err
}

// OperationNames lists the scenario's operations, as run.json and
// experiment.json name them.
func OperationNames() []string { return append([]string(nil), opNames...) }
