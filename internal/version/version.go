// Package version says which build of sparkrig is running, so a pasted report
// names the exact code that produced it.
package version

import (
	"runtime/debug"
	"sync"
)

// Override, when set at link time (-ldflags "-X
// github.com/sparkrig/sparkrig/internal/version.Override=v1.2.3"), wins over
// what the build recorded.
var Override string

var once = sync.OnceValue(func() string {
	if Override != "" {
		return Override
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return fromBuildInfo(bi)
})

// String is the version of this binary: the module version for
// `go install …@version`, the pseudo-version Go stamps from the checkout
// (v0.0.0-<time>-<commit>[+dirty]) for `go build` in a clone, or the commit
// and a dirty mark when only VCS settings were recorded.
func String() string { return once() }

func fromBuildInfo(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		return "devel-" + rev + "+dirty"
	}
	return "devel-" + rev
}
