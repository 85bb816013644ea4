package triage

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/capture"
	"github.com/sparkrig/sparkrig/internal/fixture"
	"github.com/sparkrig/sparkrig/internal/results"
)

// exchange is one recorded client line and the server's answer.
type exchange struct {
	cmd    string
	answer []byte // nil: the server did not answer
}

// recording reads a framed recording: each "CMD:" line and the verbatim
// block after it (or none, when the server did not answer).
func recording(t testing.TB, name string) []exchange {
	t.Helper()
	b := fixture.Read(t, filepath.Join("testdata", "ras", name))
	var out []exchange
	var cur *bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "CMD: "):
			out = append(out, exchange{cmd: strings.TrimPrefix(l, "CMD: ")})
		case l == "=== BEGIN VERBATIM ===":
			cur = &bytes.Buffer{}
		case l == "=== END VERBATIM ===":
			out[len(out)-1].answer = bytes.Clone(cur.Bytes())
			cur = nil
		case cur != nil:
			cur.WriteString(l + "\n")
		}
	}
	return out
}

// answer is the recorded reply to the status command of one session: the
// text STATUS, the text VERBOSE STATUS, or the JSON one.
func answer(t testing.TB, name, which string) []byte {
	t.Helper()
	ex := recording(t, name)
	for i, e := range ex {
		if e.cmd == which && (which != "VERBOSE STATUS" || i == 0 || ex[i-1].cmd != "SET FORMAT json") {
			return e.answer
		}
		if which == "json" && e.cmd == "VERBOSE STATUS" && i > 0 && ex[i-1].cmd == "SET FORMAT json" {
			return e.answer
		}
	}
	t.Fatalf("%s: no %s answer", name, which)
	return nil
}

func TestParseJSONHealthy(t *testing.T) {
	st, err := results.ParseRASJSON(answer(t, "healthy-2.txt", "json"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != "2.28.9" || st.Timestamp != "2026-11-25 14:18:08" || len(st.Comms) != 1 {
		t.Fatalf("%+v", st)
	}
	c := st.Comms[0]
	if c.Hash != "0x9cccf6db38f4cc5a" || c.Size != 3 || len(c.Ranks) != 3 || len(c.Missing) != 0 {
		t.Fatalf("%+v", c)
	}
	for i, r := range c.Ranks {
		if r.Rank != i || r.PID != 495+i || r.Host != "127.0.0.1" || r.Ops() != 460 || r.Counts["AllReduce"] != 460 || r.AsyncError != 0 {
			t.Fatalf("rank %d: %+v", i, r)
		}
	}
}

func TestParseJSONMendsNCCL2289MissingComma(t *testing.T) {
	b := answer(t, "stopped-2.txt", "json")
	if err := json_valid(b); err == nil {
		t.Fatal("the recording is expected to be invalid JSON as NCCL 2.28.9 wrote it")
	}
	st, err := results.ParseRASAnswer(b)
	if err != nil {
		t.Fatal(err)
	}
	c := st.Comms[0]
	if len(c.Ranks) != 2 || len(c.Missing) != 1 {
		t.Fatalf("%+v", c)
	}
	m := c.Missing[0]
	if m.Rank != 2 || m.PID != 497 || !m.Unresponsive || !m.Dead {
		t.Fatalf("missing %+v", m)
	}
	if c.Ranks[0].Ops() != 480 || c.Ranks[1].Ops() != 480 {
		t.Fatalf("counts %d %d", c.Ranks[0].Ops(), c.Ranks[1].Ops())
	}
}

func TestParseTextKilledAndHung(t *testing.T) {
	st, err := results.ParseRASAnswer(answer(t, "killed-1.txt", "VERBOSE STATUS"))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, f := range st.Findings {
		kinds = append(kinds, f.Kind)
	}
	if st.Version != "2.28.9" || strings.Join(kinds, ",") != "DEAD,INCOMPLETE,ERROR" {
		t.Fatalf("%q %q", st.Version, kinds)
	}
	if len(st.Dead) != 1 || st.Dead[0].PID != 497 || st.Dead[0].Host != "127.0.0.1" {
		t.Fatalf("dead %+v", st.Dead)
	}
	c := st.Comms[0]
	if c.Hash != "0x9cccf6db38f4cc5a" || len(c.Missing) != 1 || c.Missing[0].Rank != 2 || c.Missing[0].PID != 497 {
		t.Fatalf("%+v", c)
	}
	if len(c.Ranks) != 1 || c.Ranks[0].Rank != 0 || c.Ranks[0].Error != "Remote process error" || c.Ranks[0].PID != 495 {
		t.Fatalf("errors %+v", c.Ranks)
	}

	st, err = results.ParseRASAnswer(answer(t, "hung-2.txt", "VERBOSE STATUS"))
	if err != nil {
		t.Fatal(err)
	}
	bs := st.Behind()
	if len(bs) != 1 || bs[0].Ahead != 120 || bs[0].Launched != 100 || bs[0].Op != "AllReduce" || !bs[0].Named() ||
		bs[0].Ranks[0].Rank != 2 || bs[0].Ranks[0].PID != 663 {
		t.Fatalf("%+v", bs)
	}
	// ncclras prints the same text
	b := fixture.Verbatim(fixture.Read(t, "testdata/ras/hung-2.ncclras.txt"))
	st2, err := results.ParseRASAnswer(b)
	if err != nil || !reflect.DeepEqual(st2.Comms, st.Comms) {
		t.Fatalf("ncclras text differs: %v %+v", err, st2)
	}
}

func TestParseRejectsOtherText(t *testing.T) {
	if _, err := results.ParseRASAnswer([]byte("Connection refused\n")); err == nil {
		t.Fatal("not a RAS answer")
	}
	if _, err := results.ParseRASAnswer([]byte("{\"nccl_version\": ")); err == nil {
		t.Fatal("cut JSON is an error")
	}
}

// standIn is a stand-in RAS listener that replays one recorded session:
// it answers the handshake, SET FORMAT and TIMEOUT as recorded (or "OK"),
// and the status command with the recorded reply, then closes.
func standIn(t testing.TB, name string) string {
	t.Helper()
	rec := ReadRecording(fixture.Read(t, filepath.Join("testdata", "ras", name)))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go ServeRecording(c, rec)
		}
	}()
	return l.Addr().String()
}

func TestParseGPUsRecorded(t *testing.T) {
	blocks := fixture.Blocks(fixture.Read(t, "testdata/ras/hung-2.smi.txt"))
	gs, err := ParseGPUs(blocks[0])
	if err != nil {
		t.Fatal(err)
	}
	want := []GPU{{Index: 0, UUID: "GPU-a5e93a67-00a7-35d6-63b7-bf90d54863fd", Util: 100, Power: 121.41, PowerLimit: -1, SMClock: 1980, MemClock: 2619}}
	if !reflect.DeepEqual(gs, want) {
		t.Fatalf("%+v", gs)
	}
	apps, err := ParseApps(blocks[1])
	if err != nil || len(apps) != 3 || apps[0].PID != 662 || apps[0].Name != "/opt/torch/.venv/bin/python3" {
		t.Fatalf("%v %+v", err, apps)
	}
}

func TestBuildIDOfALibraryPrefix(t *testing.T) {
	// a real ELF with a known GNU build ID: the Go toolchain writes the one
	// -B asks for; the prefix the node sends holds it
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	os.WriteFile(src, []byte("package main\nfunc main() {}\n"), 0o644)
	bin := filepath.Join(dir, "x")
	out, err := goBuild(dir, bin, "-ldflags=-B=0x9fcf74d93a8c3605bf7718f594d0a24366e38536")
	if err != nil {
		t.Skipf("go build: %v %s", err, out)
	}
	b, _ := os.ReadFile(bin)
	id, err := capture.BuildID(b[:min(len(b), capture.ELFPrefix)])
	if err != nil || id != "9fcf74d93a8c3605bf7718f594d0a24366e38536" {
		t.Fatalf("%q %v", id, err)
	}
	// the same linked by the system's linker, which puts the note in a
	// PT_NOTE segment as it does in libnccl
	ext := filepath.Join(dir, "y")
	if out, err := goBuild(dir, ext, "-ldflags=-linkmode=external -B=0x25ddf25afee0a4238fbfda538f005c27f6d33825"); err != nil {
		t.Logf("no external linker: %v %s", err, out)
	} else {
		b, _ := os.ReadFile(ext)
		if id, err := capture.BuildID(b[:min(len(b), capture.ELFPrefix)]); err != nil || id != "25ddf25afee0a4238fbfda538f005c27f6d33825" {
			t.Fatalf("external: %q %v", id, err)
		}
	}
	if _, err := capture.BuildID(b[:40]); err == nil {
		t.Fatal("a cut header is an error")
	}
	if _, err := capture.BuildID([]byte("#!/bin/sh\n")); err == nil {
		t.Fatal("not ELF")
	}
}
