package records

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/scalelab/scalelab/cache"
)

// The steps a new patient's visit shares between the study's path and the
// richer sign-up path.

// doSignup signs up as a patient (bcrypt at records.bcrypt_cost): an
// audited insert of the user's register.
func (s *session) doSignup(ctx context.Context) error {
	s.name = surname(s.rng.IntN(4096)) + " " + firsts[s.rng.IntN(16)]
	form := url.Values{"csrf_token": {s.token}, "name": {s.name}, "email": {fmt.Sprintf("user%d@records.test", s.userKey())}, "password": {"a-long-password"}}
	id, err := s.postInsert(ctx, OpSignup, "/signup", form, s.userKey(), "X-User-Id")
	if err != nil {
		return err
	}
	s.uver, s.uid = true, id
	return nil
}

// postInsert posts form to path as op, an audited insert of register
// key, and returns the id of the new row, which the site answers in the
// header named idHeader.
func (s *session) postInsert(ctx context.Context, op int, path string, form url.Values, key int64, idHeader string) (int64, error) {
	p, err := s.me.Post(ctx, opNames[op], path, form, s.register(key, true, false))
	if err != nil {
		return 0, err
	}
	id, _ := strconv.ParseInt(p.Header.Get(idHeader), 10, 64)
	return id, nil
}

// doMedicalPost posts the record: five random 15-character fields.
func (s *session) doMedicalPost(ctx context.Context) error {
	form := url.Values{"csrf_token": {s.token}}
	for _, f := range []string{"allergies", "vaccines", "medication", "diseases", "history"} {
		form.Set(f, randomText(s.rng, 15))
	}
	_, err := s.me.Post(ctx, opNames[OpMedicalPost], "/medical", form, s.register(s.userKey(), false, false))
	if err == nil {
		s.allergies = form.Get("allergies")
	}
	return err
}

// doSearchProvider searches a random provider by name, which the visit
// then shares with: the whole name (exact, the study's), else the first
// records.search_chars characters. A provider must be found (names
// repeat: the seed has 4,096 distinct ones, and the page lists 20).
func (s *session) doSearchProvider(ctx context.Context, exact bool) error {
	s.provIndex = s.rng.IntN(s.w.cfg.providers)
	s.provider = providerID(s.provIndex)
	q := providerName(s.provIndex)
	if n := s.w.cfg.searchChars; !exact && n > 0 && n < len(q) {
		q = q[:n]
	}
	p, err := s.me.Get(ctx, opNames[OpSearchProviders], "/providers/search?q="+url.QueryEscape(q))
	if err != nil {
		return err
	}
	if ids := dataIDs.FindAllStringSubmatch(p.Body, -1); len(ids) == 0 {
		return fmt.Errorf("search for %q found no provider", q)
	}
	return nil
}

// doShare grants the provider searched access: an audited insert of the
// grant's register.
func (s *session) doShare(ctx context.Context) error {
	form := url.Values{"csrf_token": {s.token}, "provider": {strconv.FormatInt(s.provider, 10)}}
	id, err := s.postInsert(ctx, OpShare, "/grants", form, s.grantKey(), "X-Grant-Id")
	if err != nil {
		return err
	}
	s.gver, s.gid = true, id
	return nil
}

// doProfile shows the profile, which must show the record just posted
// (an older one is counted a stale read).
func (s *session) doProfile(ctx context.Context) error {
	p, err := s.getPage(ctx, OpProfile, "/profile")
	if err != nil {
		return err
	}
	if s.allergies != "" && !strings.Contains(p.Body, "allergies: "+s.allergies) {
		s.w.cacheStats.Record(opNames[OpProfile], cache.Event{Stale: true})
	}
	return nil
}

// doDelete deletes the account in one click: the user's register and the
// grant's, when the visit made one, are deleted.
func (s *session) doDelete(ctx context.Context) error {
	form := url.Values{"csrf_token": {s.token}}
	h := s.register(s.userKey(), false, true)
	if s.gver {
		s.register(s.grantKey(), false, true)
	}
	_, err := s.me.Post(ctx, opNames[OpDeleteAccount], "/account/delete", form, h)
	return err
}

// studyPath is the study's session and nothing else, 11 requests: home,
// sign-up page, sign up as a patient, medical page, post the record,
// providers page, search a provider by its exact name, share with
// (follow) that provider, profile, "my providers", delete the account;
// think time up to records.think_page before a page and up to
// records.think_form before a post. No reloads, no CSRF probe, no
// provider's checks.
func (s *session) studyPath() {
	s.plainPage(OpHome, "/")
	s.plainPage(OpSignupPage, "/signup")
	s.patientVisit(true)
	s.add(OpDeleteAccount, thinkForm, s.doDelete)
}

// patientVisit adds a patient's requests from the sign-up to the "my
// providers" page: as the study made them (study: no page reloaded, the
// provider searched by its exact name), or as signupPath does.
func (s *session) patientVisit(study bool) {
	s.add(OpSignup, thinkForm, s.doSignup)
	s.pageStep(OpMedicalPage, "/medical", !study)
	s.add(OpMedicalPost, thinkForm, s.doMedicalPost)
	s.pageStep(OpProvidersPage, "/providers", !study)
	s.add(OpSearchProviders, thinkPage, func(ctx context.Context) error { return s.doSearchProvider(ctx, study) })
	s.add(OpShare, thinkForm, s.doShare)
	s.add(OpProfile, thinkPage, s.doProfile)
	s.pageStep(OpMyProviders, "/my-providers", !study)
}

// StudyPath names the requests of the study's session in order.
var StudyPath = []string{"home", "signup_page", "signup", "medical_page", "medical_post", "providers_page", "search_providers", "share",
	"profile", "my_providers", "delete_account"}
