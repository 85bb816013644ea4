package sanitize

import (
	"regexp"
	"strings"
	"sync"
)

// goWords rewrites the words Go's libraries and cobra put into errors
// (syscall names, dial and lookup prefixes, "arg(s)") into a user's words;
// what each says (the path, the host, the reason) is kept. Compiled when
// an error is first rewritten, not by every run at start.
var goWords = sync.OnceValue(func() []goWord {
	return []goWord{
		{regexp.MustCompile(`\b(?:l?stat|open|readdirent|mkdir|rename|remove|unlinkat) (/?[^\s:]+): `), "$1: "},
		{regexp.MustCompile(`\bdial tcp: lookup ([^\s:]+)(?: on [^\s]+)?: no such host`), "no such host $1 (name lookup failed)"},
		{regexp.MustCompile(`\bdial tcp: lookup ([^\s:]+)(?: on [^\s]+)?: `), "name lookup of $1 failed: "},
		{regexp.MustCompile(`\bdial tcp \S+: (?:connect: )?`), ""},
		{regexp.MustCompile(`\bfork/exec (\S+): `), "cannot run $1: "},
		{regexp.MustCompile(`\bexec: "([^"]+)": executable file not found in \$PATH`), "$1 not found in PATH"},
		{regexp.MustCompile(`\bnetip\.Parse\w*\(("[^"]*")\): `), "$1: "},
		{regexp.MustCompile(`\bstrconv\.Parse\w*: parsing ("[^"]*"): `), "$1: "},
		{regexp.MustCompile(`\brequires at least (\d+) arg\(s\), only received (\d+)`), "needs at least $1 argument, got $2"},
		{regexp.MustCompile(`\baccepts at most (\d+) arg\(s\), received (\d+)`), "takes at most $1 argument, got $2"},
		{regexp.MustCompile(`\baccepts between (\d+) and (\d+) arg\(s\), received (\d+)`), "takes $1 to $2 arguments, got $3"},
		{regexp.MustCompile(`\baccepts (\d+) arg\(s\), received (\d+)`), "takes $1 argument, got $2"},
		{regexp.MustCompile(`\bexit status (\d+): |\bexit (\d+): `), ""},
		{regexp.MustCompile(`: ;`), ":"},
	}
})

// goWord is one rewrite: a match of re is replaced by with.
type goWord struct {
	re   *regexp.Regexp
	with string
}

// Plain rewrites the Go-internal words of an error line (see goWords) so
// a user reads what failed, not how Go named it.
func Plain(s string) string {
	for _, w := range goWords() {
		s = w.re.ReplaceAllString(s, w.with)
	}
	// "x.tar.gz: stat x.tar.gz: …" became "x.tar.gz: x.tar.gz: …": say it once
	parts := strings.Split(s, ": ")
	out := parts[:1]
	for _, p := range parts[1:] {
		if p != out[len(out)-1] || strings.TrimSpace(p) == "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ": ")
}
