package fix

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestUnifiedExact(t *testing.T) {
	tests := []struct {
		name, old, new, want string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"new file", "", "x\ny\n", "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{"delete all", "x\n", "", "--- a\n+++ b\n@@ -1 +0,0 @@\n-x\n"},
		{"change middle", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
			"--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"},
		{"no newline at end", "a\nb", "a\nb\n", "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n",
			"--- a\n+++ b\n@@ -1,3 +1,4 @@\n+0\n 1\n 2\n 3\n@@ -9,4 +10,3 @@\n 9\n 10\n 11\n-12\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Unified("a", "b", []byte(tt.old), []byte(tt.new)); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// applyUnified applies a unified diff to old, checking every context and
// removed line: a small patch(1) for the fuzz test.
func applyUnified(old, diff string) (string, error) {
	a := splitLines(old)
	lines := splitLines(diff)
	if len(lines) < 2 {
		return old, nil
	}
	var out []string
	pos := 0
	for i := 2; i < len(lines); {
		var oldStart, oldCount int
		h := strings.TrimSuffix(lines[i], "\n")
		if _, err := fmt.Sscanf(strings.Fields(h)[1], "-%d", &oldStart); err != nil {
			return "", fmt.Errorf("bad hunk header %q", h)
		}
		oldCount = 1
		if _, c, ok := strings.Cut(strings.Fields(h)[1], ","); ok {
			oldCount, _ = strconv.Atoi(c)
		}
		from := oldStart - 1
		if oldCount == 0 {
			from = oldStart
		}
		out = append(out, a[pos:from]...)
		pos = from
		i++
		for i < len(lines) && !strings.HasPrefix(lines[i], "@@") {
			l := lines[i]
			i++
			noNL := i < len(lines) && strings.HasPrefix(lines[i], "\\ No newline")
			body := l[1:]
			if noNL {
				body = strings.TrimSuffix(body, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if pos >= len(a) || a[pos] != body {
					return "", fmt.Errorf("line %d: want %q, have %q", pos+1, body, a[min(pos, len(a)-1)])
				}
				pos++
				if l[0] == ' ' {
					out = append(out, body)
				}
			case '+':
				out = append(out, body)
			}
		}
	}
	out = append(out, a[pos:]...)
	return strings.Join(out, ""), nil
}

func FuzzUnified(f *testing.F) {
	for _, name := range []string{"netplan-01-two-sparks-port1.txt", "netplan-03-three-sparks-ring.txt", "netplan-05-ib-checker.txt"} {
		v := verbatim(f, name)
		f.Add(v[0], v[len(v)-1])
	}
	f.Add("a\nb", "a\nb\nc")
	f.Fuzz(func(t *testing.T, old, new string) {
		d := Unified("a", "b", []byte(old), []byte(new))
		if (d == "") != (old == new) {
			t.Fatalf("empty diff for different inputs or vice versa")
		}
		got, err := applyUnified(old, d)
		if err != nil {
			t.Fatalf("%v\n%s", err, d)
		}
		if got != new {
			t.Fatalf("patched %q, want %q\n%s", got, new, d)
		}
	})
}

// TestUnifiedPatch checks the diff against GNU patch, the tool users feed it to.
func TestUnifiedPatch(t *testing.T) {
	bin, err := exec.LookPath("patch")
	if err != nil {
		t.Skip("patch not installed")
	}
	for _, tc := range topoCases[:2] {
		p := buildCase(t, tc)
		old := verbatim(t, "netplan-01-two-sparks-port1.txt")[0]
		dir := t.TempDir()
		f := filepath.Join(dir, "40-cx7.yaml")
		if err := os.WriteFile(f, []byte(old), 0o600); err != nil {
			t.Fatal(err)
		}
		want := fileOf(t, p.Hosts[0], NetplanPath)
		cmd := exec.Command(bin, "-s", f)
		cmd.Stdin = strings.NewReader(Unified("a/40-cx7.yaml", "b/40-cx7.yaml", []byte(old), want))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("patch: %v: %s", err, out)
		}
		if got, _ := os.ReadFile(f); string(got) != string(want) {
			t.Errorf("%s: patched file differs:\n%s", tc.name, got)
		}
	}
}
