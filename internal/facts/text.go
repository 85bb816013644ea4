package facts

// Parsers here are our own rather than github.com/prometheus/procfs: procfs
// reads /proc and /sys from a mount point on disk and keeps its parse
// functions unexported, while sparkrig parses bytes held in a snapshot (live,
// from an archive, or from a node reached over SSH).

import (
	"bytes"
	"strconv"
	"strings"
)

// lines splits b into lines without their line endings (a trailing "\r"
// included), as a bufio.Scanner over b with a 4 MiB buffer did: a line of
// 4 MiB or more ends the list. Each line is its own string, so a fact kept
// from one line does not hold the whole input.
func lines(b []byte) []string {
	out := make([]string, 0, bytes.Count(b, []byte{'\n'})+1)
	for len(b) > 0 {
		l, rest, _ := bytes.Cut(b, []byte{'\n'})
		if len(l) >= maxLine {
			break
		}
		out = append(out, string(bytes.TrimRight(l, "\r")))
		b = rest
	}
	return out
}

// maxLine is the longest line lines reads.
const maxLine = 4 << 20

// trimValue is a sysfs attribute without its trailing newline and spaces.
func trimValue(b []byte) string { return strings.TrimSpace(string(b)) }

// atoiPtr parses a decimal integer, nil when it is not one.
func atoiPtr(s string) *int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return nil
	}
	return &n
}

// unquote removes one pair of surrounding double or single quotes.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// parseKeyValues reads KEY=VALUE lines (os-release, dgx-release, nccl.conf,
// env output), skipping comments and blank lines; values lose their quotes.
// ParseKeyValues reads KEY=VALUE lines (/etc/nccl.conf, env output),
// skipping comments and blank lines.
func ParseKeyValues(b []byte) map[string]string { return parseKeyValues(b) }

func parseKeyValues(b []byte) map[string]string {
	out := map[string]string{}
	for _, l := range lines(b) {
		l = strings.TrimSpace(l)
		if l == "" || l[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		out[strings.TrimSpace(k)] = unquote(strings.TrimSpace(v))
	}
	return out
}
