package capture

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sparkrig/sparkrig/internal/shell"

	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// The SSH capture: Script is a POSIX sh program generated from Files and
// Commands, so a node needs nothing but /bin/sh and coreutils (any
// architecture, no sparkrig installed). It writes one framed stream to
// stdout, which ReadScriptOutput turns into the same snapshot Local would
// have taken on that node. Each record is
//
//	@@ <kind> <status> <bytes> <exit> <name>\n<bytes of payload>
//
// kind is file, link, cmd (payload: stdout), cmderr (stderr) or meta;
// status is a snapshot status; for a missing, denied or failed item the
// payload is the error text. The stream ends with "@@ end - 0 0 -"; a
// stream without it was cut off (the connection dropped mid-capture).

// scriptMarker begins every record header.
const scriptMarker = "@@ "

// Script returns the capture script for the evidence lists.
func Script() string {
	return buildScript(Files, Commands)
}

// ScriptOnly is the capture script for the files whose pattern starts
// with one of prefixes and the commands with one of ids: a command that
// needs a few facts reads them quicker than the whole list. What it leaves
// out is "not-captured" in the facts, never "missing".
func ScriptOnly(prefixes, ids []string) string {
	var files []Path
	for _, p := range Files {
		for _, pre := range prefixes {
			if strings.HasPrefix(p.Glob, pre) {
				files = append(files, p)
				break
			}
		}
	}
	var cmds []Command
	for _, c := range Commands {
		if slices.Contains(ids, c.ID) {
			cmds = append(cmds, c)
		}
	}
	return buildScript(files, cmds)
}

func buildScript(files []Path, cmds []Command) string {
	var b strings.Builder
	b.WriteString(scriptPrelude)
	b.WriteString("# Commands run in the background while files are read.\n")
	for i, c := range cmds {
		writeScriptCommand(&b, i, c)
	}
	b.WriteString("# Files.\n")
	for _, p := range files {
		fn := "rd"
		switch {
		case p.Link:
			fn = "lnk"
		case p.NameOnly:
			fn = "nameonly"
		case strings.HasPrefix(p.Glob, "/proc/") || strings.HasPrefix(p.Glob, "/sys/"):
			fmt.Fprintf(&b, "heads %s\n", shell.Quote(p.Glob))
			continue
		}
		fmt.Fprintf(&b, "each %s %s %s\n", fn, shell.Quote(p.Glob), shell.Quote(kindOf(p)))
	}
	b.WriteString("wait\n")
	for i, c := range cmds {
		if c.Each == EachNetdev {
			fmt.Fprintf(&b, "for d in $NETDEVS; do put %d.$d %s.$d; done\n", i, shell.Quote(c.ID))
		} else {
			fmt.Fprintf(&b, "put %d %s\n", i, shell.Quote(c.ID))
		}
	}
	b.WriteString("end\n")
	return b.String()
}

// writeScriptCommand emits the background run of one command (one per
// netdev for EachNetdev commands).
func writeScriptCommand(b *strings.Builder, i int, c Command) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	argv := make([]string, len(c.Argv))
	for j, a := range c.Argv {
		argv[j] = shell.Quote(a)
		if c.Each == EachNetdev {
			argv[j] = strings.ReplaceAll(argv[j], "{netdev}", `'"$d"'`)
		}
	}
	run := func(id string) string {
		return fmt.Sprintf("run %s %d %s %d %s &", id, int(timeout.Seconds()+0.5), shell.Quote(c.Filter), c.Tail, strings.Join(argv, " "))
	}
	if c.Each == EachNetdev {
		fmt.Fprintf(b, "for d in $NETDEVS; do %s done\n", run(fmt.Sprintf("%d.$d", i)))
		return
	}
	fmt.Fprintf(b, "%s\n", run(strconv.Itoa(i)))
}

// scriptPrelude defines the helpers. Regular files are read with the
// shell's own `read` (no process per file). Kernel files under /proc and
// /sys cannot be: the shell reads byte by byte, and the kernel answers a
// read at a non-zero offset of an integer sysctl (proc_dointvec) or of some
// sysfs binary attributes (cpulist) with EOF. So every match of one such
// glob is read by a single `head -v` (one read(2) per file, one process per
// glob), whose "==> path <==" sections ReadScriptOutput splits again.
// `read` drops NUL bytes, which none of the captured files hold. `timeout`
// (coreutils, busybox) bounds commands where the node has it; the caller's
// per-host deadline bounds the rest.
var scriptPrelude = `#!/bin/sh
# sparkrig capture script: reads files and runs commands, writes a framed
# stream to stdout. Changes nothing on the node. Generated; do not edit.
export LC_ALL=C
umask 077
T=$(mktemp -d 2>/dev/null) || { T=/tmp/sparkrig-capture.$$; mkdir -m 700 "$T" || exit 97; }
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM HUP
NL='
'
IFS=$NL
slurp() { # file limit: the file's text in $c
  c=; l=
  while IFS= read -r l; do
    c=$c$l$NL; l=
    [ ${#c} -lt "$2" ] || break
  done < "$1"
  c=$c$l
}
out() { # kind status exit name text
  printf '@@ %s %s %d %s %s\n%s' "$1" "$2" ${#5} "$3" "$4" "$5"
}
rd() {
  if [ ! -e "$1" ]; then out file missing 0 "$1" 'open: no such file or directory'
  elif [ ! -r "$1" ]; then out file denied 0 "$1" 'open: permission denied'
  elif [ ! -f "$1" ]; then out file error 0 "$1" 'not a regular file' # a FIFO would block the read
  else
    case $1 in
    /proc/*|/sys/*) # kernel files: one read(2) each, through head (see above)
      if head -c ` + strconv.Itoa(MaxFileBytes) + ` "$1" > "$T/f" 2> "$T/e"; then slurp "$T/f" ` + strconv.Itoa(MaxFileBytes) + `; out file ok 0 "$1" "$c"
      else IFS= read -r e < "$T/e"; out file error 0 "$1" "$e"
      fi ;;
    *) slurp "$1" ` + strconv.Itoa(MaxFileBytes) + `; out file ok 0 "$1" "$c" ;;
    esac
  fi
}
heads() { # pattern: every match of a kernel-file glob read by one head -v
  pat=$1
  [ -n "$HEADV" ] || { each rd "$pat" file; return; }
  set --
  for p in $pat; do [ -e "$p" ] && set -- "$@" "$p"; done
  if [ $# -eq 0 ]; then
    case $pat in *[*?[]*) out file missing 0 "$pat" 'no match';; *) out file missing 0 "$pat" 'open: no such file or directory';; esac
    return
  fi
  printf '@@ heads ok - 0 %s\n' "$pat"
  head -v -c ` + strconv.Itoa(MaxFileBytes) + ` -- "$@" 2> "$T/he"
  printf '\n%s\n' "$B"
  slurp "$T/he" ` + strconv.Itoa(MaxOutputBytes) + `; out headerr ok 0 "$pat" "$c"
}
lnk() {
  if [ -L "$1" ]; then out link ok 0 "$1" "$(readlink "$1")"
  else out link missing 0 "$1" 'readlink: no such file or directory'
  fi
}
nameonly() {
  if [ -L "$1" ]; then lnk "$1"
  elif [ -e "$1" ]; then out file ok 0 "$1" ''
  else out file missing 0 "$1" 'lstat: no such file or directory'
  fi
}
each() { # fn pattern kind: fn on every match, or the pattern recorded as missing
  found=
  for p in $2; do
    if [ -e "$p" ] || [ -L "$p" ]; then found=1; "$1" "$p"; fi
  done
  [ -n "$found" ] || case "$2" in *[*?[]*) out "$3" missing 0 "$2" 'no match';; *) "$1" "$2";; esac
}
run() { # slot timeout filter tail argv...
  s=$1; to=$2; filt=$3; tl=$4; shift 4
  if ! command -v "$1" >/dev/null 2>&1; then echo "missing $1 not found" > "$T/c$s.st"; return; fi
  if [ -n "$HAVE_TIMEOUT" ]; then timeout -k 1 "$to" "$@"; else "$@"; fi < /dev/null > "$T/c$s.o" 2> "$T/c$s.e"
  rc=$?
  f=o
  if [ -n "$filt" ]; then grep -E -e "$filt" "$T/c$s.$f" > "$T/c$s.g"; f=g; fi
  if [ "$tl" -gt 0 ]; then tail -n "$tl" "$T/c$s.$f" > "$T/c$s.t"; f=t; fi
  if [ $rc -eq 124 ] && [ -n "$HAVE_TIMEOUT" ]; then echo "timed-out timed out after ${to}s" > "$T/c$s.st"
  else echo "ok $rc $f" > "$T/c$s.st"; fi
}
put() { # slot id
  IFS=' ' read -r st rest < "$T/c$1.st" || { st=error; rest='no result'; }
  case $st in
  ok)
    printf '@@ cmd ok - %s %s\n' "${rest%% *}" "$2"; cat "$T/c$1.${rest#* }"; printf '\n%s\n' "$B"
    if [ -s "$T/c$1.e" ]; then slurp "$T/c$1.e" ` + strconv.Itoa(MaxOutputBytes) + `; out cmderr ok 0 "$2" "$c"; fi ;;
  missing) out cmd missing 0 "$2" "$rest" ;;
  timed-out) out cmd timed-out -1 "$2" ''; out cmderr timed-out 0 "$2" "$rest" ;;
  *) out cmd error -1 "$2" ''; out cmderr error 0 "$2" "$rest" ;;
  esac
}
end() { printf '@@ end - 0 0 -\n'; }
# Large payloads (head and command outputs) are copied as they are and end at
# a line holding this run's random boundary, instead of being counted.
B=sparkrig-boundary-$(cat /proc/sys/kernel/random/uuid 2>/dev/null || echo "$$.$(date +%s)")
out boundary ok 0 - "$B"
command -v timeout >/dev/null 2>&1 && HAVE_TIMEOUT=1
head -v -c 1 /proc/version >/dev/null 2>&1 && HEADV=1
out meta ok 0 os "$(uname -s 2>/dev/null)"
out meta ok 0 arch "$(uname -m 2>/dev/null)"
out meta ok 0 user "$(id -un 2>/dev/null)"
NETDEVS=
for p in /sys/class/net/*/device; do
  [ -e "$p" ] || [ -L "$p" ] || continue
  p=${p%/device}; NETDEVS="$NETDEVS${NETDEVS:+$NL}${p##*/}"
done
`

// ErrCaptureCut marks a capture stream that ended before its end record.
var ErrCaptureCut = errors.New("capture stream cut off")

// ScriptMeta is what the caller knows about a script capture.
type ScriptMeta struct {
	Host        string // the host as the user named it
	ToolVersion string
	CapturedAt  time.Time
	Duration    time.Duration
}

// ReadScriptOutput parses the stream Script writes into a snapshot. A cut-off
// stream returns what arrived together with an error wrapping ErrCaptureCut;
// a stream that is not a capture at all returns an error naming the problem.
func ReadScriptOutput(r io.Reader, m ScriptMeta) (*snapshot.Snapshot, error) {
	s := snapshot.New(m.Host)
	s.Manifest.CapturedAt = m.CapturedAt.UTC()
	s.Manifest.ToolVersion = m.ToolVersion
	s.Manifest.Capturer = "sh"
	s.Manifest.DurationMS = m.Duration.Milliseconds()
	br := readers.Get().(*bufio.Reader)
	br.Reset(r)
	defer func() { br.Reset(nil); readers.Put(br) }() // nothing read keeps br's buffer
	if err := skipPreamble(br); err != nil {
		return s, err
	}
	st := &scriptState{cmds: map[string]int{}, heads: map[string][]byte{}}
	var total int64
	for records := 0; ; records++ {
		if records >= maxRecords {
			return s, fmt.Errorf("capture stream of more than %d records", maxRecords)
		}
		h, n, err := readScriptHeader(br)
		if err == io.EOF {
			return s, fmt.Errorf("%w after %d items", ErrCaptureCut, len(s.Manifest.Items))
		}
		if err != nil {
			return s, err
		}
		// A header is held (as the item it becomes) like a payload, so it
		// counts: endless empty records must meet the bound too.
		if total += int64(n); total > maxStreamBytes {
			return s, fmt.Errorf("capture stream larger than %d MiB", maxStreamBytes>>20)
		}
		if h.kind == "end" {
			return s, nil
		}
		payload, err := readPayload(br, h, st.boundary, maxStreamBytes-total)
		if err != nil {
			return s, err
		}
		total += int64(len(payload))
		if h.kind == "boundary" {
			st.boundary = []byte(string(payload) + "\n")
			continue
		}
		addScriptRecord(s, h, payload, st)
	}
}

// readers are the streams' read buffers, used again by the nodes that
// follow: a fan-out allocates as many as it reads at once, not one a node.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// maxPreamble bounds what a node's shell start-up files may print before
// the script's first record (a banner from ~/.bashrc, say).
const maxPreamble = 64 << 10

// skipPreamble discards whole lines before the first record header.
func skipPreamble(br *bufio.Reader) error {
	for skipped := 0; skipped < maxPreamble; {
		head, err := br.Peek(len(scriptMarker))
		if err != nil || string(head) == scriptMarker {
			return nil // EOF and short streams are the record reader's to report
		}
		line, err := br.ReadSlice('\n')
		skipped += len(line)
		if err != nil && err != bufio.ErrBufferFull {
			return nil
		}
	}
	return fmt.Errorf("not a sparkrig capture stream: no record in the first %d KiB", maxPreamble>>10)
}

type scriptHeader struct {
	kind, status, name string
	size               int64
	exit               int
}

// maxHeaderBytes bounds a record header line: a path (PATH_MAX is 4096)
// and four short fields.
const maxHeaderBytes = 8 << 10

// maxRecords bounds the records of one stream: a DGX Spark sends about
// 200, a host with a thousand virtual interfaces a few thousand. At the
// bound a stream of empty records holds some 60 MiB of items.
const maxRecords = 50_000

// readScriptHeader reads one record header, and how many bytes it took.
func readScriptHeader(br *bufio.Reader) (scriptHeader, int, error) {
	raw, err := br.ReadSlice('\n')
	if len(raw) > maxHeaderBytes || err == bufio.ErrBufferFull {
		return scriptHeader{}, len(raw), fmt.Errorf("not a sparkrig capture stream: a record header longer than %d KiB", maxHeaderBytes>>10)
	}
	line := string(raw)
	if err != nil {
		if line == "" && err == io.EOF {
			return scriptHeader{}, 0, io.EOF
		}
		return scriptHeader{}, len(line), fmt.Errorf("%w in a record header", ErrCaptureCut)
	}
	h, err := parseScriptHeader(line)
	return h, len(line), err
}

func parseScriptHeader(line string) (scriptHeader, error) {
	rest, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), scriptMarker)
	f := strings.SplitN(rest, " ", 5)
	if !ok || len(f) != 5 {
		return scriptHeader{}, fmt.Errorf("not a sparkrig capture stream: unexpected line %.80q", line)
	}
	h := scriptHeader{kind: f[0], status: f[1], name: f[4], size: -1}
	var err1, err2 error
	if f[2] != "-" {
		if h.size, err1 = strconv.ParseInt(f[2], 10, 64); h.size < 0 {
			err1 = errors.New("negative size")
		}
	}
	h.exit, err2 = strconv.Atoi(f[3])
	if err1 != nil || err2 != nil {
		return scriptHeader{}, fmt.Errorf("not a sparkrig capture stream: bad record header %.80q", line)
	}
	if !validRecordName(h.kind, h.name) {
		return scriptHeader{}, fmt.Errorf("not a sparkrig capture stream: record name %.80q cannot be stored", h.name)
	}
	return h, nil
}

// commandID is what a command's evidence may be called ("env",
// "ethtool.enp1s0f1np1"): it becomes an archive entry's name, so a node can
// never name one outside cmds/.
var commandID = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[a-z0-9-]+(\.[A-Za-z0-9_:@+-][A-Za-z0-9_.:@+-]*)?$`)
})

// validRecordName accepts a stream record's name only where it can be
// stored as sent: command ids as above, files and links as clean absolute
// paths of printable characters.
func validRecordName(kind, name string) bool {
	if strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return false
	}
	switch kind {
	case snapshot.KindCmd, "cmderr":
		return commandID().MatchString(name) && !strings.Contains(name, "..")
	case snapshot.KindFile, snapshot.KindLink, "heads", "headerr":
	default: // meta, boundary, end: not stored under their name
		return true
	}
	// files, links and the batched reads of file globs
	return strings.HasPrefix(name, "/") && name != "/" && snapshot.Abs(name) == name
}

// scriptState is what records refer back to: commands' items (for their
// stderr) and head output waiting for its stderr.
type scriptState struct {
	cmds     map[string]int
	heads    map[string][]byte
	boundary []byte // the line ending an unsized payload, with its newline
}

// maxStreamBytes bounds a whole capture stream: a real node's is a few MB
// at most, and the bound is per node, held at once for every node of a
// fan-out (--parallel 32 × 64 MiB = 2 GiB at the very worst).
const maxStreamBytes = 64 << 20

// readPayload reads a sized payload, or an unsized one up to the boundary
// line (the newline before the boundary belongs to the framing).
func readPayload(br *bufio.Reader, h scriptHeader, boundary []byte, room int64) ([]byte, error) {
	if h.size >= 0 {
		if h.size > room {
			return nil, fmt.Errorf("capture stream larger than %d MiB", maxStreamBytes>>20)
		}
		if h.size <= 1<<20 {
			// read into one buffer of the claimed size (a claim of up to
			// 1 MiB was always allocated at once)
			buf := make([]byte, h.size)
			if _, err := io.ReadFull(br, buf); err != nil {
				return nil, fmt.Errorf("%w inside %s", ErrCaptureCut, h.name)
			}
			return buf, nil
		}
		// grown as the bytes arrive: a header's claim alone allocates no
		// more than 1 MiB
		var buf bytes.Buffer
		buf.Grow(int(min(h.size, 1<<20)))
		if _, err := io.CopyN(&buf, br, h.size); err != nil {
			return nil, fmt.Errorf("%w inside %s", ErrCaptureCut, h.name)
		}
		return buf.Bytes(), nil
	}
	if boundary == nil {
		return nil, fmt.Errorf("not a sparkrig capture stream: unsized record %s before the boundary", h.name)
	}
	var buf bytes.Buffer
	for {
		line, err := br.ReadSlice('\n')
		if bytes.Equal(line, boundary) && (buf.Len() == 0 || buf.Bytes()[buf.Len()-1] == '\n') {
			return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
		}
		buf.Write(line)
		if int64(buf.Len()) > room {
			return nil, fmt.Errorf("capture stream larger than %d MiB", maxStreamBytes>>20)
		}
		if err != nil && err != bufio.ErrBufferFull {
			return nil, fmt.Errorf("%w inside %s", ErrCaptureCut, h.name)
		}
	}
}

func addScriptRecord(s *snapshot.Snapshot, h scriptHeader, payload []byte, st *scriptState) {
	cmds := st.cmds
	switch h.kind {
	case "meta":
		setScriptMeta(&s.Manifest, h.name, string(payload))
	case snapshot.KindFile, snapshot.KindLink:
		switch {
		case h.status == snapshot.StatusError:
			st, text := scriptReadError(string(payload))
			s.AddMissing(h.kind, h.name, st, text)
		case h.status != snapshot.StatusOK:
			s.AddMissing(h.kind, h.name, h.status, string(payload))
		case h.kind == snapshot.KindLink:
			s.AddLink(h.name, string(payload))
		default:
			addFile(s, h.name, payload)
		}
	case snapshot.KindCmd:
		it := snapshot.Item{Name: h.name, Argv: scriptArgv(h.name), Status: h.status, ExitCode: h.exit}
		if h.status == snapshot.StatusMissing {
			it.Error = string(payload)
			payload = nil
		}
		if h.status == snapshot.StatusError || h.status == snapshot.StatusTimedOut {
			it.ExitCode = 0
		}
		s.AddCmd(it, payload, nil)
		cmds[h.name] = len(s.Manifest.Items) - 1
	case "heads":
		st.heads[h.name] = payload
	case "headerr":
		if out, ok := st.heads[h.name]; ok {
			delete(st.heads, h.name)
			addHeads(s, h.name, out, payload)
		}
	case "cmderr":
		i, ok := cmds[h.name]
		if !ok {
			return
		}
		if h.status == snapshot.StatusError || h.status == snapshot.StatusTimedOut {
			s.Manifest.Items[i].Error = strings.TrimSpace(string(payload))
		} else if len(payload) > 0 {
			s.Data[snapshot.CmdKey(h.name, "stderr")] = payload
		}
	}
}

// headErr matches head -v's error lines
// (GNU: "head: error reading 'P': Invalid argument"; busybox: "head: P: ...").
var (
	headErr = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^head: (?:cannot open '(.*)' for reading|error reading '(.*)'|(/[^:]*)): (.*)$`)
	})
)

// headHeader is the path of head -v's section header "==> PATH <==" that
// line (its newline included) is, if it is one.
func headHeader(line []byte) (string, bool) {
	l := bytes.TrimSuffix(line, []byte("\n"))
	if len(l) < len("==>  <==") || !bytes.HasPrefix(l, []byte("==> ")) || !bytes.HasSuffix(l, []byte(" <==")) || bytes.IndexByte(l, '\n') >= 0 {
		return "", false
	}
	return string(l[4 : len(l)-4]), true
}

// addHeads splits `head -v file...` output into one file item per section,
// and records the files head could not read with the local capture's status.
// Only headers naming a path the glob matches split sections, so a file line
// that looks like a header cannot.
func addHeads(s *snapshot.Snapshot, glob string, out, stderr []byte) {
	failed := map[string]string{}
	var failOrder []string
	for _, l := range strings.Split(string(stderr), "\n") {
		if !strings.HasPrefix(l, "head: ") {
			continue
		}
		m := headErr().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		p := m[1] + m[2] + m[3]
		failed[p] = m[4]
		failOrder = append(failOrder, p)
	}
	type section struct {
		path  string
		start int
	}
	var secs []section
	for off := 0; off < len(out); {
		l := out[off:]
		if i := bytes.IndexByte(l, '\n'); i >= 0 {
			l = l[:i+1]
		}
		// only a line that starts as a header is matched against one
		if name, ok := headHeader(l); ok {
			if ok, _ := path.Match(glob, name); ok || name == glob {
				secs = append(secs, section{name, off})
			}
		}
		off += len(l)
	}
	seen := map[string]bool{}
	for i, sec := range secs {
		end := len(out)
		if i+1 < len(secs) {
			end = secs[i+1].start
		}
		chunk := out[sec.start:end]
		body := chunk[bytes.IndexByte(chunk, '\n')+1:]
		if i+1 < len(secs) {
			body = bytes.TrimSuffix(body, []byte("\n")) // the blank line head puts before the next header
		}
		seen[sec.path] = true
		if msg, bad := failed[sec.path]; bad {
			st, text := scriptReadError(msg)
			s.AddMissing(snapshot.KindFile, sec.path, st, text)
			continue
		}
		addFile(s, sec.path, bytes.Clone(body))
	}
	for _, p := range failOrder {
		if !seen[p] {
			seen[p] = true
			st, text := scriptReadError(failed[p])
			s.AddMissing(snapshot.KindFile, p, st, text)
		}
	}
}

// scriptReadError maps head's error message to the status and text the local
// capture records for the same errno (sysfs answers EINVAL or ENODEV for
// attributes without a value, such as the speed of a link that is down).
func scriptReadError(msg string) (status, text string) {
	for _, e := range []struct{ errno, status, text string }{
		{"Invalid argument", snapshot.StatusMissing, "read: invalid argument"},
		{"No such device", snapshot.StatusMissing, "read: no such device"},
		{"No such file or directory", snapshot.StatusMissing, "open: no such file or directory"},
		{"Permission denied", snapshot.StatusDenied, "open: permission denied"},
	} {
		if strings.Contains(msg, e.errno) {
			return e.status, e.text
		}
	}
	return snapshot.StatusError, strings.TrimSpace(msg)
}

func setScriptMeta(m *snapshot.Manifest, key, v string) {
	switch key {
	case "os":
		m.OS = strings.ToLower(v)
	case "arch":
		m.Arch = goArch(v)
	case "user":
		m.User = v
	}
}

// goArch maps uname -m to Go's names, as the local capture records them.
func goArch(m string) string {
	switch m {
	case "aarch64", "arm64":
		return "arm64"
	case "x86_64", "amd64":
		return "amd64"
	}
	return m
}

// scriptArgv reconstructs a command's argv from its id ("ethtool.enp1s0f1np1").
func scriptArgv(id string) []string {
	for _, c := range Commands {
		if c.ID == id {
			return c.Argv
		}
		if nd, ok := strings.CutPrefix(id, c.ID+"."); ok && c.Each == EachNetdev {
			return c.argvFor(nd)
		}
	}
	return nil
}
