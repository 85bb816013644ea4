package results

import (
	"bytes"
	"unicode/utf8"
)

// NCCLProcEnv is what one process's INFO lines show of its NCCL settings:
// the variables its "set by environment" lines name (NCCL prints each once
// per process, when it first reads it: src/misc/param.cc) and whether it
// printed an "Init COMPLETE" line.
type NCCLProcEnv struct {
	// Proc is the "host:pid" its lines open with, Host the host.
	Proc string
	Host string
	Env  map[string]string
	Init bool
}

// The processes kept, and the variables kept of each: the first ones.
const (
	maxProcEnv  = 64
	maxProcVars = 64
)

// procKey is the "host:pid" of an INFO line's opening "host:pid:tid [dev] "
// (whatever stands before it), nil when the opening has no such form: of
// its fields (bytes.Fields), the last that does not start with '[', or
// the one before it. An opening is read from its end without splitting
// it; one with a byte of 0x80 or more in what is read (a Unicode space
// bytes.Fields splits at) is split.
func procKey(cur []byte) []byte {
	e := len(cur)
	var w []byte
	for k := range 2 {
		for e > 0 && asciiSpace(cur[e-1]) {
			e--
		}
		s := e
		for s > 0 && !asciiSpace(cur[s-1]) {
			if cur[s-1] >= utf8.RuneSelf {
				return procKeyOf(bytes.Fields(cur))
			}
			s--
		}
		if s == e {
			return nil
		}
		w = cur[s:e]
		if k > 0 || w[0] != '[' {
			break
		}
		e = s
	}
	return procKeyWord(w)
}

// asciiSpace: c is an ASCII byte unicode.IsSpace holds a space.
func asciiSpace(c byte) bool {
	return c == ' ' || c-'\t' <= '\r'-'\t'
}

// procKeyOf is procKey of an opening's fields.
func procKeyOf(f [][]byte) []byte {
	if n := len(f); n > 0 && f[n-1][0] == '[' {
		f = f[:n-1]
	}
	if len(f) == 0 {
		return nil
	}
	return procKeyWord(f[len(f)-1])
}

// procKeyWord is the "host:pid" of the field "host:pid:tid", read from the
// right (tid digits, ':', pid digits, ':', the host back to the previous
// ':', ']' or '>' or the word's start), so a prefix glued to the host
// ("[default0]:host:pid:tid", "tag:host:pid:tid") stays out of the key.
func procKeyWord(w []byte) []byte {
	digits := func(end int) int { // start of the digits ending at end
		i := end
		for i > 0 && w[i-1] >= '0' && w[i-1] <= '9' {
			i--
		}
		return i
	}
	tid := digits(len(w))
	if tid == len(w) || tid == 0 || w[tid-1] != ':' {
		return nil
	}
	pidEnd := tid - 1
	pid := digits(pidEnd)
	if pid == pidEnd || pid == 0 || w[pid-1] != ':' {
		return nil
	}
	host := pid - 1
	for host > 0 && w[host-1] != ':' && w[host-1] != ']' && w[host-1] != '>' {
		host--
	}
	if host == pid-1 {
		return nil
	}
	return w[host:pidEnd]
}

// procEnv is the record of the process whose INFO line is being read, made
// when there is room; nil when the line names no process or none is left.
func (l *NCCLLog) procEnv() *NCCLProcEnv {
	// an opening read before names the same record again (records are
	// only added): the last few openings are remembered with its index
	i, ok := l.procs.get(l.cur)
	if !ok {
		i = l.procIndex()
		l.procs.put(l.cur, i)
	}
	if i < 0 {
		return nil
	}
	return &l.ProcEnv[i]
}

// procIndex is the index in ProcEnv of the record of the process whose
// INFO line is being read, -1 when the line names no process or none is
// left.
func (l *NCCLLog) procIndex() int {
	key := procKey(l.cur)
	if key == nil {
		return -1
	}
	for i := range l.ProcEnv {
		if l.ProcEnv[i].Proc == string(key) {
			return i
		}
	}
	if len(l.ProcEnv) >= maxProcEnv {
		return -1
	}
	host := key[:bytes.IndexByte(key, ':')]
	l.ProcEnv = append(l.ProcEnv, NCCLProcEnv{Proc: string(key), Host: string(host)})
	l.envGen++
	return len(l.ProcEnv) - 1
}

// procSetEnv records a variable the process of the current line shows.
func (l *NCCLLog) procSetEnv(k, v string) {
	p := l.procEnv()
	if p == nil {
		return
	}
	if p.Env == nil {
		p.Env = map[string]string{}
	}
	if old, ok := p.Env[k]; ok && old != v || !ok && len(p.Env) < maxProcVars {
		p.Env[k] = v
		l.envGen++
	}
}
