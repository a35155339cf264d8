package records

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/scalelab/scalelab/cache"
	"github.com/scalelab/scalelab/engine"
)

// Caching in the site (cache.mode local or shared), as the study's Rails
// app had it:
//   - page fragments keyed by (user id, updated_at): the providers page
//     and the lists of grants. With a cache, a grant's change touches both
//     users' updated_at (Rails' touch: true), so any change of what a
//     fragment shows gives it a new key;
//   - the home page (static);
//   - provider search results for cache.search_ttl (providers are never
//     deleted, so a cached result can be old but never shows a deleted
//     user).
//
// A patient's record as a provider sees it is never served from the cache:
// the grant is checked in the store on every request. HTTP 304s
// (records.etag): global tags every page with the state of every user and
// grant (any write anywhere changes it); narrow with the viewer's own row
// (and, for a record, the patient's), which the touches keep current.
//
// Responses say what the cache did in X-Cache (hit or miss) and
// Server-Timing (cache;dur=MS, store;dur=MS), so that a load generator
// counts hits and times across any number of app servers.

// Headers of a response the cache answered or filled.
const (
	HeaderCache  = "X-Cache"
	HeaderTiming = "Server-Timing"
)

// ETag modes (records.etag).
const (
	etagOff    = "off"
	etagGlobal = "global"
	etagNarrow = "narrow"
)

// siteCache is the site's caching: kv nil is no cache.
type siteCache struct {
	kv        engine.KV
	searchTTL time.Duration
	etag      string
	// unsafe keys pages by URL alone and serves a cached record without
	// checking the grant (tests only: it shows that the sessions' safety
	// checks catch a cache that leaks).
	unsafe bool
}

// touches reports whether grant changes touch both users' updated_at.
func (c *siteCache) touches() bool { return c.kv != nil || c.etag == etagNarrow }

// unsafeCacheForTests makes in-process sites cache unsafely: only this
// package's tests set it.
var unsafeCacheForTests bool

// fragment returns the fragment under key from the cache, or builds it
// (store queries and rendering), stores it for ttl and returns it. Without
// a cache it builds. A cache that fails the get is bypassed (the page is
// served from the store, nothing is filled) and said so in X-Cache
// ("error"); a fill that fails after a miss is "miss, fill failed".
func (s *Site) fragment(ctx context.Context, w http.ResponseWriter, key string, ttl time.Duration, build func() (string, error)) (string, error) {
	if s.cache.kv == nil {
		return build()
	}
	t0 := time.Now()
	v, err := s.cache.kv.Get(ctx, key)
	tCache := time.Since(t0)
	if err == nil {
		w.Header().Set(HeaderCache, "hit")
		w.Header().Set(HeaderTiming, timing(tCache, 0))
		return string(v), nil
	}
	failed := !errors.Is(err, engine.ErrNotFound)
	t1 := time.Now()
	out, err := build()
	tStore := time.Since(t1)
	if err != nil {
		return "", err
	}
	state := "error"
	if !failed {
		state = "miss"
		t2 := time.Now()
		if err := s.cache.kv.Set(ctx, key, []byte(out), ttl); err != nil {
			state = "miss, fill failed"
		}
		tCache += time.Since(t2)
	}
	w.Header().Set(HeaderCache, state)
	w.Header().Set(HeaderTiming, timing(tCache, tStore))
	return out, nil
}

// timing is a Server-Timing value.
func timing(c, s time.Duration) string {
	return fmt.Sprintf("cache;dur=%.3f, store;dur=%.3f", float64(c)/1e6, float64(s)/1e6)
}

// parseTiming reads the cache and store milliseconds of a Server-Timing
// value (0 for what it lacks).
func parseTiming(v string) (c, s time.Duration) {
	for _, part := range strings.Split(v, ",") {
		name, rest, _ := strings.Cut(strings.TrimSpace(part), ";")
		_, dur, ok := strings.Cut(rest, "dur=")
		ms, err := strconv.ParseFloat(dur, 64)
		if !ok || err != nil {
			continue
		}
		d := time.Duration(ms * 1e6)
		switch name {
		case "cache":
			c = d
		case "store":
			s = d
		}
	}
	return c, s
}

// cachedProviders is the providers page's list: without a cache from the
// store (N+1 queries or one, records.eager); with one, the first providers
// (the same for everyone, never changed by the site) from the cache and
// the patient's sharing with them in one query.
func (s *Site) cachedProviders(r *http.Request, w http.ResponseWriter, u User) ([]ProviderRow, error) {
	n := s.st.pageN
	if s.cache.kv == nil {
		return s.st.firstProviders(r.Context(), s.readerOf(u.ID), u.ID, n)
	}
	key := "providers:first:" + strconv.Itoa(n)
	if s.st.pageByName {
		key += ":by-name"
	}
	list, err := s.fragment(r.Context(), w, key, 0, func() (string, error) {
		ps, err := s.st.firstList(r.Context(), s.readerOf(u.ID), n)
		var b strings.Builder
		for _, p := range ps {
			fmt.Fprintf(&b, "%d\t%s\n", p.ID, p.Name)
		}
		return b.String(), err
	})
	if err != nil {
		return nil, err
	}
	var ps []ProviderRow
	for _, line := range strings.Split(strings.TrimSuffix(list, "\n"), "\n") {
		id, name, _ := strings.Cut(line, "\t")
		v, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("cached providers: %q: %w", line, err)
		}
		ps = append(ps, ProviderRow{ID: v, Name: name})
	}
	t1 := time.Now()
	err = s.st.sharedAmong(r.Context(), s.readerOf(u.ID), u.ID, ps)
	c, st := parseTiming(w.Header().Get(HeaderTiming))
	w.Header().Set(HeaderTiming, timing(c, st+time.Since(t1)))
	return ps, err
}

// userKey is a fragment's key for a user's page part.
func userKey(part string, u User) string {
	return part + ":" + strconv.FormatInt(u.ID, 10) + ":" + strconv.FormatInt(u.UpdatedAt, 10)
}

// notModified sets the page's ETag and answers 304 when the browser holds
// it; version is what the tag covers beside the viewer ("" none).
func (s *Site) notModified(w http.ResponseWriter, r *http.Request, u User, version string) bool {
	var tag string
	switch s.cache.etag {
	case etagGlobal:
		v, err := s.st.globalVersion(r.Context())
		if err != nil {
			return false // no tag: the page is rendered
		}
		tag = fmt.Sprintf(`W/"g%d-%s"`, u.ID, v)
	case etagNarrow:
		tag = fmt.Sprintf(`W/"n%d-%d-%s"`, u.ID, u.UpdatedAt, version)
	default:
		return false
	}
	w.Header().Set("ETag", tag)
	w.Header().Set("Cache-Control", "private, no-cache")
	for _, t := range strings.Split(r.Header.Get("If-None-Match"), ",") {
		if strings.TrimSpace(t) == tag {
			w.WriteHeader(http.StatusNotModified)
			return true
		}
	}
	return false
}

// observe counts what the cache did for a response (its X-Cache and
// Server-Timing headers) in the run's cache stats.
func (w *workload) observe(op string, h http.Header) {
	state := h.Get(HeaderCache)
	if state == "" || w.cacheStats == nil {
		return
	}
	c, st := parseTiming(h.Get(HeaderTiming))
	e := cache.Event{Hit: state == "hit", Miss: strings.HasPrefix(state, "miss"), Error: state == "error", Cache: c, Store: st, CacheCalls: 1}
	if e.Miss {
		e.CacheCalls = 2 // the get that missed, and the fill
	}
	if st > 0 {
		e.StoreCalls = 1
	}
	w.cacheStats.Record(op, e)
}
