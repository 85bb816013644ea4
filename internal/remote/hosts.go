package remote

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// MaxHosts bounds one host list, so a typo like spark-[1-999999] fails fast;
// it leaves room for fleets of ten thousand nodes.
const MaxHosts = 16384

// ParseHostList expands a comma-separated host list with pdsh-style ranges:
// "spark-[01-04]", "node[1,3,5-7]", "a,b[1-2].lan". Zero-padding of the
// range's low end is kept. Duplicates are dropped, order is kept.
func ParseHostList(s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, item := range splitOutsideBrackets(s) {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		hosts, err := expandRange(item)
		if err != nil {
			return nil, err
		}
		for _, h := range hosts {
			if !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
			if len(out) > MaxHosts {
				return nil, fmt.Errorf("host list expands to more than %d hosts", MaxHosts)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty host list")
	}
	return out, nil
}

// splitOutsideBrackets splits on commas that are not inside [...].
func splitOutsideBrackets(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// expandRange expands every [...] group of one host pattern.
func expandRange(p string) ([]string, error) {
	open := strings.IndexByte(p, '[')
	if open < 0 {
		if strings.ContainsAny(p, "] \t") {
			return nil, fmt.Errorf("bad host %q", p)
		}
		return []string{p}, nil
	}
	end := strings.IndexByte(p[open:], ']')
	if end < 0 {
		return nil, fmt.Errorf("host range %q: missing ]", p)
	}
	end += open
	values, err := rangeValues(p[open+1 : end])
	if err != nil {
		return nil, fmt.Errorf("host range %q: %w", p, err)
	}
	rest, err := expandRange(p[end+1:])
	if err != nil {
		return nil, err
	}
	var out []string
	for _, v := range values {
		for _, r := range rest {
			out = append(out, p[:open]+v+r)
			if len(out) > MaxHosts {
				return nil, fmt.Errorf("host range %q expands to more than %d hosts", p, MaxHosts)
			}
		}
	}
	return out, nil
}

// rangeValues expands "01-04,7" into 01 02 03 04 7.
func rangeValues(s string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || lo == "" {
			return nil, fmt.Errorf("%q is not a number", lo)
		}
		if !isRange {
			if out = append(out, lo); len(out) > MaxHosts {
				return nil, fmt.Errorf("%q has more than %d values", s, MaxHosts)
			}
			continue
		}
		b, err := strconv.Atoi(hi)
		if err != nil || b < a {
			return nil, fmt.Errorf("bad range %q", part)
		}
		if b-a >= MaxHosts {
			return nil, fmt.Errorf("range %q has more than %d values", part, MaxHosts)
		}
		width := 0
		if len(lo) > 1 && lo[0] == '0' {
			width = len(lo)
		}
		// Counted, not compared with hi: at the integer limit i <= b
		// never fails, and the loop would fill memory.
		for n := range b - a + 1 {
			out = append(out, fmt.Sprintf("%0*d", width, a+n))
		}
		if len(out) > MaxHosts {
			return nil, fmt.Errorf("%q has more than %d values", s, MaxHosts)
		}
	}
	return out, nil
}

// HostfileEntry is one host of a hostfile with its slot count (0 when not given).
type HostfileEntry struct {
	Host  string
	Slots int
}

// ParseHostfile reads an MPI hostfile ("spark-01 slots=1 max_slots=2") or a
// plain list (one host per line). '#' starts a comment; blank lines are
// skipped; a host may be a pdsh range. Errors name the line.
func ParseHostfile(b []byte) ([]HostfileEntry, error) {
	var out []HostfileEntry
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for ln := 1; sc.Scan(); ln++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		slots := 0
		for _, kv := range f[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				// Open MPI also accepts "host:slots" style only on the command line.
				return nil, fmt.Errorf("line %d: unexpected %q (want host [slots=N])", ln, kv)
			}
			if k == "slots" {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					return nil, fmt.Errorf("line %d: bad slots=%q", ln, v)
				}
				slots = n
			}
		}
		hosts, err := expandRange(f[0])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", ln, err)
		}
		for _, h := range hosts {
			if !seen[h] {
				seen[h] = true
				out = append(out, HostfileEntry{Host: h, Slots: slots})
			}
		}
		if len(out) > MaxHosts {
			return nil, fmt.Errorf("hostfile has more than %d hosts", MaxHosts)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no hosts in hostfile")
	}
	return out, nil
}
