package analyze

import (
	"bytes"
	"encoding/json"
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
					n, err1, err2, st1, st2, len(seen1), len(seen2), ncclFacts(t, &o1), ncclFacts(t, &o2))
			}
		}
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
