package results

import (
	"regexp"
	"sync"
)

// lazyRE is a pattern compiled when it is first used: the RAS patterns
// are needed only by a log that holds a RAS report, and every command
// would otherwise compile them at start.
type lazyRE struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
}

func lazyRegexp(src string) *lazyRE { return &lazyRE{src: src} }

func (r *lazyRE) get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.src) })
	return r.re
}

func (r *lazyRE) FindSubmatch(b []byte) [][]byte { return r.get().FindSubmatch(b) }

func (r *lazyRE) FindStringSubmatch(s string) []string { return r.get().FindStringSubmatch(s) }

func (r *lazyRE) ReplaceAll(src, repl []byte) []byte { return r.get().ReplaceAll(src, repl) }
