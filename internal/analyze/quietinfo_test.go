package analyze

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sparkrig/sparkrig/internal/fixture"
	"github.com/sparkrig/sparkrig/internal/results"
)

// lineOnly hides the paste reader's ObserveQuietInfo: the NCCL parser then
// reads every line through Next, the full parse.
type lineOnly struct{ results.LineSource }

// The paste reader's shortcut for quiet NCCL INFO lines reads every real
// paste and log as the full parse does: the same results, the same
// normalisation counts, and the same lines handed to the error catalogue.
func TestPasteQuietInfoShortcut(t *testing.T) {
	var names []string
	for _, d := range []string{"pasted", "nccl-logs", "nccl-logs-launchers", "nccl-tests", "field"} {
		n, _ := filepath.Glob(filepath.Join("testdata", d, "*.txt"))
		names = append(names, n...)
	}
	if len(names) < 50 {
		t.Fatalf("only %d samples found", len(names))
	}
	for _, n := range names {
		raw, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		b := fixture.Verbatim(raw)
		if len(b) == 0 {
			b = raw
		}
		// each sample as it is and with a tag before every line (a
		// prefix docPrefix removes) and on some lines only
		for _, in := range [][]byte{b, prefixEvery(b, "0: ", 1), prefixEvery(b, "[1,0]<stdout>:", 3)} {
			samePasteParse(t, n, in)
		}
	}
}

// samePasteParse fails unless in reads the same through the paste reader
// with the shortcut for quiet INFO lines as without it: the same results,
// normalisation counts and lines handed to the error catalogue.
func samePasteParse(t *testing.T, name string, in []byte) {
	t.Helper()
	parse := func(full bool) (results.NCCLOutput, pasteStats, []string, error) {
		st := pasteStats{prefix: docPrefix(in)}
		var seen []string
		src := newPasteReader(bytes.NewReader(in), &st, nil)
		var lr results.LineSource = src
		if full {
			lr = lineOnly{src}
		}
		o, err := results.ParseNCCLTestsLinesSeen(lr, func(l []byte) { seen = append(seen, string(l)) })
		st.scratch = nil
		return o, st, seen, err
	}
	o1, st1, seen1, err1 := parse(false)
	o2, st2, seen2, err2 := parse(true)
	if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(st1, st2) || !reflect.DeepEqual(seen1, seen2) ||
		ncclFacts(t, &o1) != ncclFacts(t, &o2) {
		t.Fatalf("%s: the shortcut reads otherwise than the full parse (errors %v, %v; stats %+v, %+v; %d, %d lines seen)\n%s\nfull:\n%s",
			name, err1, err2, st1, st2, len(seen1), len(seen2), ncclFacts(t, &o1), ncclFacts(t, &o2))
	}
}

// Property: the lines of the real samples in any order, with empty lines,
// comments, redrawn lines and headers whose "#" a paste lost between
// them, read the same through the paste reader with the shortcut as
// without it.
func TestPasteQuietInfoShortcutProperty(t *testing.T) {
	var lines [][]byte
	for _, d := range []string{"nccl-logs", "nccl-tests"} {
		names, _ := filepath.Glob(filepath.Join("testdata", d, "*.txt"))
		for _, n := range names {
			raw, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, bytes.SplitAfter(fixture.Verbatim(raw), []byte("\n"))...)
		}
	}
	between := []string{"\n", "\r\n", "#\n", "#\r\n", "# Using devices\n", "#\r# Using devices\n",
		"# Using\rRank  0 Group  0 Pid  1 on a device  0 [0x01] GB10\n", "#\rnThread 1 nGpus 1 minBytes 8 maxBytes 8\n",
		"#\r> # Using devices\n", "#        (B)    (elements)\n", "nThread 1 nGpus 1 minBytes 8 maxBytes 8\n", "```\n"}
	rng := rand.New(rand.NewPCG(36, 3))
	for iter := range 200 {
		var b []byte
		for range 1 + rng.IntN(300) {
			if rng.IntN(5) == 0 {
				b = append(b, between[rng.IntN(len(between))]...)
			}
			b = append(b, lines[rng.IntN(len(lines))]...)
		}
		samePasteParse(t, fmt.Sprintf("mix %d", iter), b)
	}
}

// ncclFacts is what an NCCL output says, as text: its fields and what the
// log's methods derive from the state they keep.
func ncclFacts(t *testing.T, o *results.NCCLOutput) string {
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	on, off := o.Log.GDRHosts()
	kinds, gdr := o.Log.TransportKinds()
	single, why := o.Log.SingleNode()
	d, err := json.Marshal([]any{o.Lines, o.Log.InfoLines, on, off, kinds, gdr, single, why, o.Log.HostClash(), o.Log.NetDevicesUsed(), o.Log.RDMA()})
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n" + string(d)
}

// prefixEvery puts p before every k-th line of b.
func prefixEvery(b []byte, p string, k int) []byte {
	var out []byte
	for i, line := range bytes.SplitAfter(b, []byte("\n")) {
		if i%k == 0 && len(line) > 0 {
			out = append(out, p...)
		}
		out = append(out, line...)
	}
	return out
}
