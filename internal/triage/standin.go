package triage

import (
	"bufio"
	"bytes"
	"io"
	"strings"
)

// Replay is a recorded RAS session for a stand-in listener: the recorded
// answer to each command ("CLIENT PROTOCOL 2", "STATUS", "VERBOSE STATUS",
// and "json VERBOSE STATUS" for the one after SET FORMAT json).
type Replay map[string][]byte

// ServeRecording answers one client connection of NCCL's RAS protocol
// from a recording: a stand-in for a node's RAS service in tests and the
// rig, never for a real job. SET FORMAT and TIMEOUT are answered "OK"; a
// status command gets its recorded reply and the connection closes.
func ServeRecording(c io.ReadWriteCloser, r Replay) {
	defer c.Close()
	br := bufio.NewReader(c)
	jsonFmt := false
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(cmd, "CLIENT PROTOCOL"):
			a, ok := r[cmd]
			if !ok {
				a = []byte("SERVER PROTOCOL 2\n")
			}
			c.Write(a)
		case cmd == "SET FORMAT json":
			jsonFmt = true
			c.Write([]byte("OK\n"))
		case strings.HasPrefix(cmd, "TIMEOUT "), strings.HasPrefix(cmd, "SET FORMAT"):
			c.Write([]byte("OK\n"))
		case cmd == "STATUS", cmd == "VERBOSE STATUS":
			key := cmd
			if jsonFmt {
				key = "json VERBOSE STATUS"
			}
			c.Write(r[key])
			return
		default:
			c.Write([]byte("ERROR unknown command\n"))
		}
	}
}

// ReadRecording reads a recorded RAS session in the framed form of
// testdata/ras (a "CMD:" line with what the client sent, then the
// server's answer between "=== BEGIN VERBATIM ===" and "=== END VERBATIM
// ==="; no block when it did not answer) as a Replay. The first answer
// to each command is kept.
func ReadRecording(b []byte) Replay {
	r := Replay{}
	var cmd, prev string
	var cur *bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "CMD: "):
			prev, cmd = cmd, strings.TrimPrefix(l, "CMD: ")
		case l == "=== BEGIN VERBATIM ===":
			cur = &bytes.Buffer{}
		case l == "=== END VERBATIM ===" && cur != nil:
			key := cmd
			if cmd == "VERBOSE STATUS" && prev == "SET FORMAT json" {
				key = "json " + cmd
			}
			if _, ok := r[key]; !ok {
				r[key] = bytes.Clone(cur.Bytes())
			}
			cur = nil
		case cur != nil:
			cur.WriteString(l + "\n")
		}
	}
	return r
}
