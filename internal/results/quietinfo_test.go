package results

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"testing/iotest"
)

// lineOnly hides a source's ObserveQuietInfo: the parser then reads every
// line through Next and Observe, the full parse the shortcut must match.
type lineOnly struct{ LineSource }

// sameParse parses b with the quiet-INFO shortcut and without it and
// fails unless the two outputs (every fact, the log's own state, the
// line count), the lines handed to the second reader and the errors are
// equal. small reads the input a few bytes at a time, so that lines
// straddle the reader's buffer.
func sameParse(t *testing.T, b []byte, small bool) {
	t.Helper()
	in := func() io.Reader {
		if small {
			return iotest.HalfReader(iotest.OneByteReader(bytes.NewReader(b)))
		}
		return bytes.NewReader(b)
	}
	var seenFast, seenFull []string
	fast, errFast := ParseNCCLTestsLinesSeen(NewLineReader(in()), func(l []byte) { seenFast = append(seenFast, string(l)) })
	full, errFull := ParseNCCLTestsLinesSeen(lineOnly{NewLineReader(in())}, func(l []byte) { seenFull = append(seenFull, string(l)) })
	if (errFast == nil) != (errFull == nil) {
		t.Fatalf("errors differ: %v, full parse %v", errFast, errFull)
	}
	if !reflect.DeepEqual(seenFast, seenFull) {
		t.Fatalf("lines seen differ:\n%q\nfull parse:\n%q", seenFast, seenFull)
	}
	// cur points into each reader's buffer: compared by its bytes
	if string(fast.Log.cur) != string(full.Log.cur) {
		t.Fatalf("current prefix %q, full parse %q", fast.Log.cur, full.Log.cur)
	}
	fast.Log.cur, full.Log.cur = nil, nil
	if !reflect.DeepEqual(fast, full) {
		t.Fatalf("the shortcut reads otherwise than the full parse:\n%+v\nfull:\n%+v", fast.Log, full.Log)
	}
}

// realLog is one verbatim NCCL log or nccl-tests output kept in testdata.
type realLog struct {
	name string
	text []byte
}

// realLogs are the verbatim NCCL logs and nccl-tests outputs kept in
// testdata, in the order of their paths.
func realLogs(t testing.TB) []realLog {
	var logs []realLog
	for _, d := range []string{"nccl-logs", "nccl-tests"} {
		names, _ := filepath.Glob(filepath.Join("testdata", d, "*"))
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			if v := extractVerbatim(b); len(v) > 0 {
				b = v
			}
			logs = append(logs, realLog{n, b})
		}
	}
	return logs
}

// realLines are the lines of realLogs.
func realLines(t testing.TB) [][]byte {
	var lines [][]byte
	for _, l := range realLogs(t) {
		lines = append(lines, bytes.SplitAfter(l.text, []byte("\n"))...)
	}
	return lines
}

// The shortcut for quiet INFO lines reads every real log as the full
// parse does, whole and read a byte or two at a time.
func TestQuietInfoShortcutRealLogs(t *testing.T) {
	for _, l := range realLogs(t) {
		t.Run(filepath.Base(l.name), func(t *testing.T) {
			sameParse(t, l.text, false)
			sameParse(t, l.text, true)
		})
	}
}

// Property: any mix of real lines, in any order, each with any of the
// prefixes launchers and pastes put in front (or a random one), CRLF or
// '\r' redraws, cut short or run together, with empty lines and comments
// between them, reads the same with the shortcut as without it.
func TestQuietInfoShortcutProperty(t *testing.T) {
	lines := realLines(t)
	prefixes := []string{"", "", "", "[1,0]<stdout>:", "0: ", "  3: ", "2026-03-13T22:26:02Z ", "[rank3]: ",
		"(RayWorkerWrapper pid=2981, ip=10.0.0.2) ", "svc  | ", "> ", "nThread ", "size ", "\t", "#"}
	// lines nccl-tests' parser skips or reads, and a row's wrapped rest
	between := []string{"\n", "\r\n", "\r", "#\n", "#\r\n", "#  \t \n", "# Using devices\n", "#\r# Using devices\n",
		"#        (B)    (elements)\n", "# nThread 1 nGpus 1 minBytes 8 maxBytes 8\n", "#  Rank  0 Group  0 Pid  1 on a device  0 [0x01] GB10\n",
		"# \u00a0x\n", "#\v\f\n", " #\n", "  1073741824     134217728     float\n", "   24.5  43.98  21.99  0\n"}
	rng := rand.New(rand.NewPCG(36, 2))
	for iter := range 300 {
		var b []byte
		for range 1 + rng.IntN(400) {
			line := lines[rng.IntN(len(lines))]
			if rng.IntN(6) == 0 {
				b = append(b, between[rng.IntN(len(between))]...)
			}
			switch rng.IntN(12) {
			case 0:
				b = append(b, prefixes[rng.IntN(len(prefixes))]...)
			case 1:
				p := make([]byte, rng.IntN(12))
				for i := range p {
					p[i] = byte(rng.IntN(128))
				}
				b = append(b, p...)
			case 2:
				line = line[:rng.IntN(len(line)+1)]
			case 3:
				line = bytes.Replace(line, []byte("\n"), []byte("\r\n"), 1)
			case 4:
				if len(line) > 4 {
					at := rng.IntN(len(line) - 1)
					line = append(append(append([]byte{}, line[:at]...), '\r'), line[at:]...)
				}
			}
			b = append(b, line...)
		}
		sameParse(t, b, iter%4 == 0)
	}
}

// FuzzQuietInfoShortcut: any input reads the same with the shortcut for
// quiet INFO lines as without it.
func FuzzQuietInfoShortcut(f *testing.F) {
	seedAll(f, "nccl-logs", "nccl-tests")
	f.Fuzz(func(t *testing.T, b []byte) {
		sameParse(t, b, false)
	})
}

// Property: mayAlarm passes every message quietAlarm finds a failure in:
// the INFO messages of the real logs, the alarm words alone and cut
// short, and random bytes after each first byte of alarmFirst.
func TestMayAlarmKeepsAlarms(t *testing.T) {
	var msgs [][]byte
	for _, line := range realLines(t) {
		if _, m, ok := bytes.Cut(line, []byte("NCCL INFO ")); ok {
			msgs = append(msgs, bytes.TrimRight(m, "\r\n"))
		}
	}
	for _, w := range []string{"Failed to open", "Call to ibv_reg_mr failed", "Could not open XML topology file /etc/topo.xml : No such file or directory", "NET/Plugin: Plugin load returned 2",
		"ncclMaxSharedMem 232448 exceeds device/fn maxSharedMem 101376", "ncclSocketConnect: connect to 10.0.0.2<40001> returned Connection refused, retrying",
		"socketPollConnect: connect to 10.0.0.2<40001> returned Connection refused, retrying"} {
		for n := range len(w) + 1 {
			msgs = append(msgs, []byte(w[:n]))
		}
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for range 20000 {
		m := make([]byte, 1+rng.IntN(24))
		for i := range m {
			m[i] = byte(rng.IntN(256))
		}
		m[0] = "FCNns"[rng.IntN(5)]
		msgs = append(msgs, m)
	}
	alarms := 0
	for _, m := range msgs {
		if len(m) == 0 || !alarmFirst[m[0]] || quietAlarm(m) {
			continue
		}
		alarms++
		if !mayAlarm(m) {
			t.Fatalf("mayAlarm(%q) = false; quietAlarm finds a failure in it", m)
		}
	}
	if alarms < 10 {
		t.Fatalf("only %d messages with a failure tried", alarms)
	}
}
