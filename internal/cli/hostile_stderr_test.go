package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStderrShowsOutsideTextAsEscapes: a file name carrying OSC 52 (write
// the clipboard), a clear-screen and a private-use character that used to
// become ESC is named on stderr with visible escapes, on one line.
func TestStderrShowsOutsideTextAsEscapes(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "x\x1b]52;c;cm0gLXJmIH4K\a\uE01B[2J\u202e.log")
	if err := os.Mkdir(name, 0o700); err != nil { // a directory: analyze refuses it by name
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Main([]string{"analyze", name}, strings.NewReader(""), &stdout, &stderr)
	out := stderr.String()
	if code == 0 {
		t.Errorf("exit %d", code)
	}
	if strings.ContainsAny(out, "\x1b\a\uE01B\u202e") {
		t.Errorf("a raw control character reached stderr: %q", out)
	}
	if !strings.Contains(out, `x\x1b]52;c;cm0gLXJmIH4K\x07\ue01b[2J\u202e.log`) {
		t.Errorf("the file name is not shown: %q", out)
	}
}

// TestStderrNamesWithNewlinesForgeNoLine: a file name holding a newline
// followed by what looks like sparkrig's own summary stays on its input's
// one line, for analyze and for report.
func TestStderrNamesWithNewlinesForgeNoLine(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "x.log\nsummary 9 of 9 host(s) audited: 0 fail · 0 warn")
	if err := os.Mkdir(name, 0o700); err != nil { // a directory: refused by name
		t.Fatal(err)
	}
	for _, cmd := range []string{"analyze", "report"} {
		var stdout, stderr bytes.Buffer
		code := Main([]string{cmd, name}, strings.NewReader(""), &stdout, &stderr)
		if code == 0 {
			t.Errorf("%s: exit 0", cmd)
		}
		for _, l := range strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n") {
			if strings.HasPrefix(l, "summary") {
				t.Errorf("%s: a name forged a line on stderr: %q", cmd, stderr.String())
			}
		}
		if !strings.Contains(stderr.String(), `x.log\x0asummary 9`) {
			t.Errorf("%s: the name is not shown escaped: %q", cmd, stderr.String())
		}
	}
}
