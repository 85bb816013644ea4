package results

import "testing"

// Every RAS pattern compiles: they are compiled at their first use, not
// at start, where a bad one would have failed every command at once.
func TestRASPatternsCompile(t *testing.T) {
	for _, r := range []*lazyRE{rasProcessLine, rasRankPlain, rasRankLaunch, rasRankNone, rasRankStatus, rasRankError,
		rasGroupLaunch, rasGroupNone, rasGroupStatus, rasGroupError, rasOpHeading, rasCommHeading, rasMissingComma} {
		if r.get() == nil {
			t.Errorf("%s: not compiled", r.src)
		}
		if r.get().String() != r.src {
			t.Errorf("%s compiled as %s", r.src, r.get())
		}
	}
}
