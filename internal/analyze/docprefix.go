package analyze

import "bytes"

// A collector or launcher not known by name (docker compose's "svc | ",
// pdsh's "host: ", a tool's own tag) writes the same tag in front of every
// line of a job's output. docPrefix finds such a tag from the sample: the
// first line's leading word and separator, when nearly every line of the
// sample starts with exactly it. The word is letters, digits and ". _ -";
// the separator a ':' (with or without spaces after it), a '|' with
// spaces around it, or spaces. What would read as part of a program's
// own line is never taken: NCCL's "host:pid:tid" (a ':' then a digit),
// its "NCCL" tag, a cut host ("1234:5678").
func docPrefix(sample []byte) []byte {
	// cand, and short: cand without its last space (the first line's text
	// may start with a space of its own)
	var cand, short []byte
	lines, with, withShort, tableRows, restPipe := 0, 0, 0, 0, 0
	rest := sample
	for len(rest) > 0 && lines < 400 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			// the sample's last line may be cut: not counted
			break
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if cand == nil {
			if len(stripDecoration(line)) != len(line) {
				return nil // a known tag (a timestamp, syslog's header): read as such
			}
			if cand = prefixCandidate(line); cand == nil {
				return nil
			}
			short = cand
			if cand[len(cand)-1] == ' ' && len(bytes.TrimRight(cand, " ")) < len(cand) {
				short = cand[:len(cand)-1]
			}
		}
		lines++
		if t := bytes.TrimRight(line, " \t"); t[len(t)-1] == '|' {
			tableRows++
		}
		if bytes.HasPrefix(line, cand) {
			with++
			if r := trimBlank(line[len(cand):]); len(r) > 0 && r[0] == '|' {
				restPipe++
			}
		}
		if bytes.HasPrefix(line, short) {
			withShort++
		}
	}
	if k := bytes.IndexByte(cand, '|'); k > 0 && tableRows*10 >= lines*9 && restPipe*10 < lines*9 {
		// a Markdown table's rows ("| a | b |") behind a word: the '|' is the table's
		cand = cand[:k]
		if with*10 >= lines*9 {
			return cand
		}
		return nil
	}
	switch {
	case lines < 4:
		return nil
	case with*10 >= lines*9:
		return cand
	case withShort*10 >= lines*9 && len(bytes.TrimSpace(short)) > 0:
		return short
	}
	return nil
}

// prefixCandidate is the line's leading word and separator, or nil.
func prefixCandidate(line []byte) []byte {
	i := 0
	letter := false
	for i < len(line) && i < 64 {
		c := line[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			letter = true
		} else if !(c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			break
		}
		i++
	}
	if i == 0 || i == len(line) || !letter || string(line[:i]) == "NCCL" {
		return nil
	}
	j := i
	switch line[j] {
	case ':':
		j++
		if hostPid(line[j:]) {
			return nil // NCCL's host:pid:tid
		}
		if j < len(line) && line[j] == ' ' {
			j++
		}
	case ' ', '|':
		for j < len(line) && line[j] == ' ' {
			j++
		}
		switch {
		case j < len(line) && line[j] == '|':
			j++
			if j < len(line) && line[j] == ' ' {
				j++
			}
		case line[i] == '|':
			return nil
		default:
			j = i + 1 // one space after the word
		}
	default:
		return nil
	}
	if j >= len(line) {
		return nil
	}
	return line[:j:j]
}

// hostPid: b starts with "pid:tid", the rest of NCCL's "host:pid:tid".
func hostPid(b []byte) bool {
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(b) && b[i] == ':' && b[i+1] >= '0' && b[i+1] <= '9'
}
