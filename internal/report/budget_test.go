package report

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// hostsDoc is a doctor document of n hosts, each holding one finding: 2n+1
// JSON objects.
func hostsDoc(n int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"schema_version":%d,"tool":"sparkrig","command":"doctor","status":"ok","hosts":[`, SchemaVersion)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"host":"node-%d","status":"audited","findings":[{"id":"x","severity":"ok","subject":"a \"{quoted}\" brace"}]}`, i)
	}
	b.WriteString("]}")
	return b.Bytes()
}

// A document within MaxInputObjects is merged whole; one past it is
// refused unread with the limit named, and so is one that takes the
// documents before it past the limit, while the others are kept.
func TestRunRefusesADocumentPastTheObjectCap(t *testing.T) {
	dir := t.TempDir()
	under := (MaxInputObjects - 1) / 2 // 2n+1 objects: one under the cap
	over := under + 1                  // one over it
	if got := countObjects(hostsDoc(under)); got != MaxInputObjects-1 {
		t.Fatalf("%d hosts hold %d objects, want %d", under, got, MaxInputObjects-1)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big, small, huge := write("big.json", hostsDoc(under)), write("small.json", hostsDoc(1)), write("huge.json", hostsDoc(over))
	run := func(inputs ...string) (*Report, []string) {
		var heard []string
		r, err := Run(context.Background(), Options{Inputs: inputs, Now: time.Unix(0, 0),
			Warn: func(in, msg string) { heard = append(heard, filepath.Base(in)+": "+msg) }})
		if err != nil {
			t.Fatal(err)
		}
		return r, heard
	}
	r, heard := run(big)
	if len(heard) != 0 || len(r.Hosts) != under || r.Status == VerdictUnknown {
		t.Fatalf("at the cap: %d hosts, status %s, heard %q", len(r.Hosts), r.Status, heard)
	}
	r, heard = run(huge)
	want := fmt.Sprintf("huge.json: holds %d JSON objects (hosts, findings, links …), past the %d one report reads", 2*over+1, MaxInputObjects)
	if !slices.Equal(heard, []string{want}) || len(r.Hosts) != 0 || r.Status != VerdictUnknown {
		t.Fatalf("past the cap: %d hosts, status %s, heard %q, want %q", len(r.Hosts), r.Status, heard, want)
	}
	r, heard = run(small, big)
	want = fmt.Sprintf("big.json: holds %d JSON objects (hosts, findings, links …) (3 in the documents before it), past the %d one report reads", MaxInputObjects-1, MaxInputObjects)
	if !slices.Equal(heard, []string{want}) || len(r.Hosts) != 1 || r.Status != VerdictUnknown {
		t.Fatalf("together past the cap: %d hosts, status %s, heard %q, want %q", len(r.Hosts), r.Status, heard, want)
	}
}

// countObjects counts the braces that open objects, none inside strings,
// escaped quotes included.
func TestCountObjects(t *testing.T) {
	for in, want := range map[string]int{
		`{}`: 1, `{"a":{"b":[{},{}]}}`: 4, `{"a":"{{\"{"}`: 1, `{"a":"\\"}`: 1, `{"a":"\\",{}}`: 2, `[]`: 0,
		strings.Repeat(`{},`, 10): 10,
	} {
		if got := countObjects([]byte(in)); got != want {
			t.Errorf("countObjects(%s) = %d, want %d", in, got, want)
		}
	}
}
