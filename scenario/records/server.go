package records

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// The site: server-rendered pages and form posts as the study's Rails app
// had them. A web session is a signed cookie (user id and CSRF token,
// HMAC-SHA256 with the site's secret), so that any app server holding the
// secret serves any user; every form carries the session's CSRF token and
// a post without it is refused (403).

// Cookie is the session cookie's name.
const Cookie = "rc_session"

// Audit headers: the load generator's register key and version for the
// write a post makes (docs/audit.md); the site stores them with the row.
const (
	HeaderAuditKey     = "X-Audit-Key"
	HeaderAuditVersion = "X-Audit-Version"
)

// Site serves the patient-records pages on a store.
type Site struct {
	st     *store
	secret []byte
	cost   int
	// leak serves records without checking grants (tests only: it shows
	// that the sessions' access checks catch a leak).
	leak bool
	// cache is the site's caching (cache.go).
	cache siteCache

	mu      sync.Mutex
	readers map[int64]*reader
}

// newSite returns the site; secret signs the session cookies.
func newSite(st *store, secret []byte, cost int) *Site {
	return &Site{st: st, secret: secret, cost: cost, readers: map[int64]*reader{}}
}

// readerOf is the user's reader (their read-your-writes window).
func (s *Site) readerOf(uid int64) *reader {
	if uid == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.readers[uid]
	if !ok {
		r = s.st.db.newReader()
		if len(s.readers) > 100000 {
			clear(s.readers)
		}
		s.readers[uid] = r
	}
	return r
}

// webSession is what the cookie carries.
type webSession struct {
	uid  int64
	csrf string
}

func (s *Site) sign(v string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(v))
	return hex.EncodeToString(m.Sum(nil))
}

func (s *Site) setSession(w http.ResponseWriter, ss webSession) {
	v := strconv.FormatInt(ss.uid, 10) + "." + ss.csrf
	http.SetCookie(w, &http.Cookie{Name: Cookie, Value: base64.RawURLEncoding.EncodeToString([]byte(v + "." + s.sign(v))),
		Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

// sessionOf reads the request's session; ok=false without a valid one.
func (s *Site) sessionOf(r *http.Request) (webSession, bool) {
	c, err := r.Cookie(Cookie)
	if err != nil {
		return webSession{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil {
		return webSession{}, false
	}
	parts := strings.Split(string(b), ".")
	if len(parts) != 3 || !hmac.Equal([]byte(s.sign(parts[0]+"."+parts[1])), []byte(parts[2])) {
		return webSession{}, false
	}
	uid, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return webSession{}, false
	}
	return webSession{uid: uid, csrf: parts[1]}, true
}

func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// anonymous returns the request's session, making an anonymous one (with
// a CSRF token for the forms) when it has none.
func (s *Site) anonymous(w http.ResponseWriter, r *http.Request) webSession {
	ss, ok := s.sessionOf(r)
	if !ok {
		ss = webSession{csrf: newToken()}
		s.setSession(w, ss)
	}
	return ss
}

// Handler returns the site's routes.
func (s *Site) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.home)
	mux.HandleFunc("GET /signup", s.signupPage)
	mux.HandleFunc("POST /signup", s.form(s.signup))
	mux.HandleFunc("GET /login", s.loginPage)
	mux.HandleFunc("POST /login", s.form(s.login))
	mux.HandleFunc("GET /medical", s.user(s.medicalPage))
	mux.HandleFunc("POST /medical", s.form(s.user(s.medicalPost)))
	mux.HandleFunc("GET /providers", s.user(s.providersPage))
	mux.HandleFunc("GET /providers/search", s.user(s.searchProviders))
	mux.HandleFunc("POST /grants", s.form(s.user(s.share)))
	mux.HandleFunc("POST /grants/{id}/{action}", s.form(s.user(s.changeGrant)))
	mux.HandleFunc("GET /profile", s.user(s.profile))
	mux.HandleFunc("GET /my-providers", s.user(s.myGrants))
	mux.HandleFunc("GET /patients", s.user(s.myGrants))
	mux.HandleFunc("GET /patients/search", s.user(s.searchPatients))
	mux.HandleFunc("GET /patients/{id}", s.user(s.viewRecord))
	mux.HandleFunc("POST /requests", s.form(s.user(s.requestAccess)))
	mux.HandleFunc("POST /account/delete", s.form(s.user(s.deleteAccount)))
	return mux
}

// userHandler is a handler for a signed-in user.
type userHandler func(w http.ResponseWriter, r *http.Request, ss webSession, u User)

// user loads the signed-in user, or answers 401.
func (s *Site) user(h userHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ss, ok := s.sessionOf(r)
		if !ok || ss.uid == 0 {
			http.Error(w, "sign in first", http.StatusUnauthorized)
			return
		}
		u, err := s.st.userByID(r.Context(), s.readerOf(ss.uid), ss.uid)
		if errors.Is(err, errNoUser) {
			http.Error(w, "no such account", http.StatusUnauthorized)
			return
		}
		if err != nil {
			s.fail(w, err)
			return
		}
		h(w, r, ss, u)
	}
}

// form refuses a post whose CSRF token is missing or not the session's.
func (s *Site) form(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ss, ok := s.sessionOf(r)
		tok := r.PostFormValue("csrf_token")
		if !ok || tok == "" || !hmac.Equal([]byte(tok), []byte(ss.csrf)) {
			http.Error(w, "invalid authenticity token", http.StatusForbidden)
			return
		}
		h(w, r)
	}
}

// fail answers a store error: 503 when the store timed out or is
// overloaded, 500 otherwise (the text names the error).
func (s *Site) fail(w http.ResponseWriter, err error) {
	if errors.Is(err, context.DeadlineExceeded) {
		http.Error(w, "store timeout: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	http.Error(w, "store error: "+err.Error(), http.StatusInternalServerError)
}

func (s *Site) page(w http.ResponseWriter, title, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body><h1>%s</h1>%s</body></html>", html.EscapeString(title), html.EscapeString(title), body)
}

func csrfField(ss webSession) string {
	return `<input type="hidden" name="csrf_token" value="` + ss.csrf + `">`
}

func (s *Site) home(w http.ResponseWriter, r *http.Request) {
	body, _ := s.fragment(r.Context(), w, "static:home", 0, func() (string, error) {
		return `<p>Keep your medical record and choose who sees it.</p><a href="/signup">Sign up</a> <a href="/login">Sign in</a>`, nil
	})
	s.page(w, "Whispr", body)
}

func (s *Site) signupPage(w http.ResponseWriter, r *http.Request) {
	ss := s.anonymous(w, r)
	s.page(w, "Sign up", `<form method="post" action="/signup">`+csrfField(ss)+
		`<input name="name"><input name="email"><input name="password" type="password"><button>Sign up</button></form>`)
}

func (s *Site) loginPage(w http.ResponseWriter, r *http.Request) {
	ss := s.anonymous(w, r)
	s.page(w, "Sign in", `<form method="post" action="/login">`+csrfField(ss)+
		`<input name="email"><input name="password" type="password"><button>Sign in</button></form>`)
}

// auditOf reads a post's audit key and version (0 when absent).
func auditOf(r *http.Request) (int64, int64) {
	k, _ := strconv.ParseInt(r.Header.Get(HeaderAuditKey), 10, 64)
	v, _ := strconv.ParseInt(r.Header.Get(HeaderAuditVersion), 10, 64)
	return k, v
}

func (s *Site) signup(w http.ResponseWriter, r *http.Request) {
	name, email, pw := r.PostFormValue("name"), r.PostFormValue("email"), r.PostFormValue("password")
	if name == "" || email == "" || len(pw) < 8 {
		http.Error(w, "name, email and a password of 8 characters or more are needed", http.StatusUnprocessableEntity)
		return
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(pw), s.cost)
	if err != nil {
		s.fail(w, err)
		return
	}
	akey, aver := auditOf(r)
	id, err := s.st.signUp(r.Context(), User{Role: RolePatient, Name: name, Email: email, PwHash: string(hash), UpdatedAt: time.Now().UnixMilli()}, akey, aver)
	if err != nil {
		if isUnique(err) {
			http.Error(w, "that email is taken", http.StatusUnprocessableEntity)
			return
		}
		s.fail(w, err)
		return
	}
	s.st.db.wrote(s.readerOf(id))
	s.setSession(w, webSession{uid: id, csrf: newToken()})
	w.Header().Set("X-User-Id", strconv.FormatInt(id, 10))
	http.Redirect(w, r, "/medical", http.StatusSeeOther)
}

// isUnique reports a unique-constraint violation.
func isUnique(err error) bool {
	m := err.Error()
	return strings.Contains(m, "UNIQUE constraint") || strings.Contains(m, "23505")
}

func (s *Site) login(w http.ResponseWriter, r *http.Request) {
	u, err := s.st.userByEmail(r.Context(), r.PostFormValue("email"))
	if err != nil && !errors.Is(err, errNoUser) {
		s.fail(w, err)
		return
	}
	if err != nil || bcrypt.CompareHashAndPassword([]byte(u.PwHash), []byte(r.PostFormValue("password"))) != nil {
		http.Error(w, "wrong email or password", http.StatusUnauthorized)
		return
	}
	s.setSession(w, webSession{uid: u.ID, csrf: newToken()})
	to := "/my-providers"
	if u.Role == RoleProvider {
		to = "/patients"
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

func (s *Site) medicalPage(w http.ResponseWriter, r *http.Request, ss webSession, u User) {
	if s.notModified(w, r, u, "") {
		return
	}
	var b strings.Builder
	b.WriteString(`<form method="post" action="/medical">` + csrfField(ss))
	for _, f := range [][2]string{{"allergies", u.Allergies}, {"vaccines", u.Vaccines}, {"medication", u.Medication}, {"diseases", u.Diseases}, {"history", u.History}} {
		fmt.Fprintf(&b, `<input name="%s" value="%s">`, f[0], html.EscapeString(f[1]))
	}
	b.WriteString(`<button>Save</button></form>`)
	s.page(w, "Medical record", b.String())
}

func (s *Site) medicalPost(w http.ResponseWriter, r *http.Request, ss webSession, u User) {
	if u.Role != RolePatient {
		http.Error(w, "only patients keep a record", http.StatusForbidden)
		return
	}
	u.Allergies, u.Vaccines, u.Medication = r.PostFormValue("allergies"), r.PostFormValue("vaccines"), r.PostFormValue("medication")
	u.Diseases, u.History, u.UpdatedAt = r.PostFormValue("diseases"), r.PostFormValue("history"), time.Now().UnixMilli()
	_, aver := auditOf(r)
	if err := s.st.saveRecord(r.Context(), u, aver); err != nil {
		s.fail(w, err)
		return
	}
	s.st.db.wrote(s.readerOf(u.ID))
	http.Redirect(w, r, "/profile", http.StatusSeeOther)
}

func providerList(ps []ProviderRow, shared bool) string {
	var b strings.Builder
	b.WriteString("<ul>")
	for _, p := range ps {
		mark := ""
		if shared {
			mark = " (not shared)"
			if p.Shared {
				mark = " (shared with you)"
			}
		}
		fmt.Fprintf(&b, `<li data-id="%d">%s%s</li>`, p.ID, html.EscapeString(p.Name), mark)
	}
	b.WriteString("</ul>")
	return b.String()
}

func (s *Site) providersPage(w http.ResponseWriter, r *http.Request, ss webSession, u User) {
	if s.notModified(w, r, u, "") {
		return
	}
	ps, err := s.cachedProviders(r, w, u)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.page(w, "Providers", providerList(ps, true))
}

func (s *Site) searchProviders(w http.ResponseWriter, r *http.Request, ss webSession, u User) {
	s.searchRole(w, r, u, RoleProvider, "Providers named "+r.URL.Query().Get("q"))
}

func (s *Site) searchPatients(w http.ResponseWriter, r *http.Request, ss webSession, u User) {
	if u.Role != RoleProvider {
		http.Error(w, "only providers search patients", http.StatusForbidden)
		return
	}
	s.searchRole(w, r, u, RolePatient, "Patients named "+r.URL.Query().Get("q"))
}

func (s *Site) searchRole(w http.ResponseWriter, r *http.Request, u User, role, title string) {
	q := r.URL.Query().Get("q")
	if q == "" {
		http.Error(w, "q is needed", http.StatusBadRequest)
		return
	}
	search := func() (string, error) {
		ps, err := s.st.search(r.Context(), s.readerOf(u.ID), role, q)
		return providerList(ps, false), err
	}
	var body string
	var err error
	switch {
	case s.cache.unsafe && s.cache.kv != nil:
		// any role's results by query, kept past deletions
		body, err = s.fragment(r.Context(), w, "search:"+role+":"+q, time.Minute+s.cache.searchTTL, search)
	case role == RoleProvider && s.cache.searchTTL > 0:
		body, err = s.fragment(r.Context(), w, "search:"+role+":"+q, s.cache.searchTTL, search)
	default:
		body, err = search()
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	s.page(w, title, body)
}

func formID(r *http.Request, key string) (int64, bool) {
	v, err := strconv.ParseInt(r.PostFormValue(key), 10, 64)
	return v, err == nil && v > 0
}

// share: a patient grants a provider access.
func (s *Site) share(w http.ResponseWriter, r *http.Request, ss webSession, u User) {
	prov, ok := formID(r, "provider")
	if !ok || u.Role != RolePatient {
		http.Error(w, "a patient shares with a provider id", http.StatusUnprocessableEntity)
		return
	}
	s.addGrant(w, r, u, Grant{Patient: u.ID, Provider: prov, Status: StatusGranted, AskedBy: RolePatient}, "/my-providers")
}

// requestAccess: a provider asks a patient for access.
func (s *Site) requestAccess(w http.ResponseWriter, r *http.Request, ss webSession, u User) {
	pat, ok := formID(r, "patient")
	if !ok || u.Role != RoleProvider {
		http.Error(w, "a provider asks a patient id", http.StatusUnprocessableEntity)
		return
	}
	s.addGrant(w, r, u, Grant{Patient: pat, Provider: u.ID, Status: StatusRequested, AskedBy: RoleProvider}, "/patients")
}

// addGrant stores a grant u makes and redirects to the user's list; the
// new grant's id is in the X-Grant-Id header.
func (s *Site) addGrant(w http.ResponseWriter, r *http.Request, u User, g Grant, to string) {
	akey, aver := auditOf(r)
	id, err := s.st.addGrant(r.Context(), g, time.Now().UnixMilli(), akey, aver)
	if errors.Is(err, errNoUser) {
		http.Error(w, "no such "+map[string]string{RolePatient: RoleProvider, RoleProvider: RolePatient}[u.Role], http.StatusNotFound)
		return
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	s.st.db.wrote(s.readerOf(u.ID))
	w.Header().Set("X-Grant-Id", strconv.FormatInt(id, 10))
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// changeGrant: a patient accepts, declines or revokes one of their grants.
func (s *Site) changeGrant(w http.ResponseWriter, r *http.Request, ss webSession, u User) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || u.Role != RolePatient {
		http.Error(w, "a patient changes one of their grants", http.StatusUnprocessableEntity)
		return
	}
	var to string
	var from []string
	switch r.PathValue("action") {
	case "accept":
		to, from = StatusGranted, []string{StatusRequested}
	case "decline":
		to, from = StatusDeclined, []string{StatusRequested}
	case "revoke":
		to, from = StatusRevoked, []string{StatusGranted}
	default:
		http.Error(w, "accept, decline or revoke", http.StatusNotFound)
		return
	}
	_, aver := auditOf(r)
	if err := s.st.setGrant(r.Context(), id, u.ID, to, from, time.Now().UnixMilli(), aver); err != nil {
		if errors.Is(err, errNoUser) {
			http.Error(w, "no such grant in that state", http.StatusNotFound)
			return
		}
		s.fail(w, err)
		return
	}
	s.st.db.wrote(s.readerOf(u.ID))
	http.Redirect(w, r, "/my-providers", http.StatusSeeOther)
}

func (s *Site) profile(w http.ResponseWriter, r *http.Request, ss webSession, u User) {
	if s.notModified(w, r, u, "") {
		return
	}
	s.page(w, u.Name, fmt.Sprintf(`<p>%s</p><p>allergies: %s</p><form method="post" action="/account/delete">%s<button>Delete my account</button></form>`,
		html.EscapeString(u.Email), html.EscapeString(u.Allergies), csrfField(ss)))
}

// myGrants lists a patient's providers or a provider's patients, each
// grant with its id and status.
func (s *Site) myGrants(w http.ResponseWriter, r *http.Request, ss webSession, u User) {
	if s.notModified(w, r, u, "") {
		return
	}
	list, err := s.fragment(r.Context(), w, userKey("grants", u), 0, func() (string, error) {
		gs, err := s.st.grantsOf(r.Context(), s.readerOf(u.ID), u)
		var b strings.Builder
		b.WriteString("<ul>")
		for _, g := range gs {
			other := g.Provider
			if u.Role == RoleProvider {
				other = g.Patient
			}
			audit := ""
			if g.AKey != 0 {
				// the register a client's audit follows the grant by
				// (written by audited runs only)
				audit = fmt.Sprintf(` data-audit="%d"`, g.AKey)
			}
			fmt.Fprintf(&b, `<li data-grant="%d" data-user="%d" data-status="%s"%s>%s: %s</li>`, g.ID, other, g.Status, audit, html.EscapeString(g.Name), g.Status)
		}
		b.WriteString("</ul>")
		return b.String(), err
	})
	if err != nil {
		s.fail(w, err)
		return
	}
	s.page(w, "Access", list+csrfField(ss))
}

// viewRecord: a provider reads a patient's record, only with a current
// grant (403 without, 404 for a patient that does not exist).
func (s *Site) viewRecord(w http.ResponseWriter, r *http.Request, ss webSession, u User) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || u.Role != RoleProvider {
		http.Error(w, "providers read their patients' records", http.StatusForbidden)
		return
	}
	if s.cache.unsafe && s.cache.kv != nil {
		// the page by patient alone, served without the grant check
		if v, err := s.cache.kv.Get(r.Context(), "record:"+strconv.FormatInt(id, 10)); err == nil {
			w.Header().Set(HeaderCache, "hit")
			s.page(w, "Record", string(v))
			return
		}
	}
	p, err := s.st.recordFor(r.Context(), u.ID, id, s.leak)
	if err == nil && s.notModified(w, r, u, strconv.FormatInt(p.UpdatedAt, 10)) {
		return
	}
	switch {
	case errors.Is(err, errNoUser):
		http.Error(w, "no such patient", http.StatusNotFound)
	case errors.Is(err, errDenied):
		http.Error(w, "no access", http.StatusForbidden)
	case err != nil:
		s.fail(w, err)
	default:
		body := fmt.Sprintf(`<p data-patient="%d">allergies: %s; vaccines: %s; medication: %s; diseases: %s; history: %s</p>`, p.ID,
			html.EscapeString(p.Allergies), html.EscapeString(p.Vaccines), html.EscapeString(p.Medication), html.EscapeString(p.Diseases), html.EscapeString(p.History))
		if s.cache.unsafe && s.cache.kv != nil {
			w.Header().Set(HeaderCache, "miss")
			_ = s.cache.kv.Set(r.Context(), "record:"+strconv.FormatInt(id, 10), []byte(body), 0)
		}
		s.page(w, p.Name, body)
	}
}

// deleteAccount removes the user, their grants and record at once.
func (s *Site) deleteAccount(w http.ResponseWriter, r *http.Request, ss webSession, u User) {
	if err := s.st.deleteAccount(r.Context(), u.ID); err != nil && !errors.Is(err, errNoUser) {
		s.fail(w, err)
		return
	}
	s.mu.Lock()
	delete(s.readers, u.ID)
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: Cookie, Value: "", Path: "/", MaxAge: -1})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
