package facts

// Parsers here are our own rather than github.com/prometheus/procfs: procfs
// reads /proc and /sys from a mount point on disk and keeps its parse
// functions unexported, while sparkrig parses bytes held in a snapshot (live,
// from an archive, or from a node reached over SSH).

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// lines splits b into lines without their line endings.
func lines(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	for sc.Scan() {
		out = append(out, strings.TrimRight(sc.Text(), "\r"))
	}
	return out
}

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
