package expect

import (
	"regexp"
	"sync"
)

// Regexp is a catalogue pattern compiled when it is first tried. A
// catalogue read from its YAML file has every pattern compiled as it is
// read (a pattern that does not compile is an error of the file); one
// compiled in (catalogue_gen.go) was compiled when it was written, and
// most of its patterns are never tried on a given log.
type Regexp struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
}

// lazyRegexp is src, compiled at its first use; re, when not nil, is src
// compiled already.
func lazyRegexp(src string, re *regexp.Regexp) *Regexp {
	return &Regexp{src: src, re: re}
}

func (r *Regexp) get() *regexp.Regexp {
	r.once.Do(func() {
		if r.re == nil {
			r.re = regexp.MustCompile(r.src)
		}
	})
	return r.re
}

// Match reports whether b holds a match of the pattern.
func (r *Regexp) Match(b []byte) bool { return r.get().Match(b) }

// MatchString reports whether s holds a match of the pattern.
func (r *Regexp) MatchString(s string) bool { return r.get().MatchString(s) }

// String is the pattern's source text.
func (r *Regexp) String() string { return r.src }
