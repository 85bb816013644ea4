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

// procKeyWord is the "host:pid" of the field "host:pid:tid".
func procKeyWord(w []byte) []byte {
	i := bytes.IndexByte(w, ':')
	if i <= 0 {
		return nil
	}
	j := i + 1
	for j < len(w) && w[j] >= '0' && w[j] <= '9' {
		j++
	}
	if j == i+1 || j >= len(w) || w[j] != ':' {
		return nil
	}
	return w[:j]
}

// procEnv is the record of the process whose INFO line is being read, made
// when there is room; nil when the line names no process or none is left.
func (l *NCCLLog) procEnv() *NCCLProcEnv {
	key := procKey(l.cur)
	if key == nil {
		return nil
	}
	for i := range l.ProcEnv {
		if l.ProcEnv[i].Proc == string(key) {
			return &l.ProcEnv[i]
		}
	}
	if len(l.ProcEnv) >= maxProcEnv {
		return nil
	}
	host := key[:bytes.IndexByte(key, ':')]
	l.ProcEnv = append(l.ProcEnv, NCCLProcEnv{Proc: string(key), Host: string(host)})
	return &l.ProcEnv[len(l.ProcEnv)-1]
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
	if _, ok := p.Env[k]; ok || len(p.Env) < maxProcVars {
		p.Env[k] = v
	}
}
