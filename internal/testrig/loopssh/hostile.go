package loopssh

import (
	"bytes"
	"fmt"
	"io"
)

// The streams below are what a hostile or broken node may send in answer
// to the capture script. Each writes until the client stops reading (a
// write error) or limit bytes are out, and returns how many it sent.

// EndlessHeader sends the start of a record header ("@@ ") and then a
// header line that never ends.
func EndlessHeader(w io.Writer, limit int64) int64 {
	return repeat(w, []byte("@@ "), bytes.Repeat([]byte("A"), 32<<10), limit)
}

// EndlessEmptyRecords sends zero-size records of kind ("link", "file",
// "cmd") without end, each under a new name.
func EndlessEmptyRecords(w io.Writer, kind string, limit int64) int64 {
	sent := 0
	var chunk bytes.Buffer
	for i := int64(0); ; {
		chunk.Reset()
		for chunk.Len() < 32<<10 {
			name := fmt.Sprintf("/sys/class/net/v%d", i)
			if kind == "cmd" {
				name = fmt.Sprintf("ethtool.v%d", i)
			}
			fmt.Fprintf(&chunk, "@@ %s ok 0 0 %s\n", kind, name)
			i++
		}
		n, err := w.Write(chunk.Bytes())
		sent += n
		if err != nil || int64(sent) > limit {
			return int64(sent)
		}
	}
}

func repeat(w io.Writer, head, body []byte, limit int64) int64 {
	sent, err := w.Write(head)
	for err == nil && int64(sent) <= limit {
		var n int
		n, err = w.Write(body)
		sent += n
	}
	return int64(sent)
}
