package snapshot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func node(host string) Node {
	s := New(host)
	s.AddFile("/proc/sys/net/core/rmem_max", []byte("212992\n"))
	s.AddMissing("file", "/sys/class/infiniband", StatusMissing, "")
	return Node{Host: host, Snap: s}
}

// heard collects what Run reports.
type heard struct{ wrote, failed []string }

func (h *heard) options(o RunOptions, nodes ...Node) RunOptions {
	o.Capture = func(context.Context, WriteFunc) ([]Node, error) { return nodes, nil }
	o.Wrote = func(p, summary string) { h.wrote = append(h.wrote, filepath.Base(p)+" "+summary) }
	o.Failed = func(host string, err error) { h.failed = append(h.failed, host+": "+err.Error()) }
	return o
}

// TestRunOneNode: this machine's snapshot is written to the archive named,
// and read back the same; a second run refuses to replace it without Force
// (and captures nothing), and replaces it with Force.
func TestRunOneNode(t *testing.T) {
	out := filepath.Join(t.TempDir(), "n1.tar.gz")
	h := &heard{}
	if failed, err := Run(context.Background(), h.options(RunOptions{Output: out}, node("n1"))); err != nil || failed != 0 {
		t.Fatalf("failed %d, err %v", failed, err)
	}
	if !slices.Equal(h.wrote, []string{"n1.tar.gz 2 items (1 missing, 0 denied, 0 errors) in 0 ms"}) {
		t.Errorf("wrote %q", h.wrote)
	}
	s, err := Read(out)
	if err != nil || s.Manifest.Host != "n1" {
		t.Fatalf("read back: %v", err)
	}
	if b, ok := s.File("/proc/sys/net/core/rmem_max"); !ok || string(b) != "212992\n" {
		t.Errorf("read back %q", b)
	}
	o := h.options(RunOptions{Output: out}, node("n1"))
	o.Capture = func(context.Context, WriteFunc) ([]Node, error) {
		t.Error("captured though the target is refused")
		return nil, nil
	}
	if _, err := Run(context.Background(), o); err == nil || err.Error() != out+" exists; add --force to replace it" {
		t.Errorf("second run: %v", err)
	}
	if _, err := Run(context.Background(), h.options(RunOptions{Output: out, Force: true}, node("n1"))); err != nil {
		t.Errorf("with force: %v", err)
	}
}

// TestRunPerHost: one archive per node that was captured, named by its
// host; a node that was not captured, and one whose archive exists, are
// each named with why, and the others are still written.
func TestRunPerHost(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "n3.tar.gz"), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := &heard{}
	failed, err := Run(context.Background(), h.options(RunOptions{Output: dir, PerHost: true},
		node("n1"), Node{Host: "n2", Err: errors.New("n2: dial tcp: connection refused")}, node("n3")))
	if err != nil || failed != 2 {
		t.Fatalf("failed %d, err %v", failed, err)
	}
	if len(h.wrote) != 1 || !strings.HasPrefix(h.wrote[0], "n1.tar.gz ") {
		t.Errorf("wrote %q", h.wrote)
	}
	want := []string{"n2: n2: dial tcp: connection refused", "n3: " + filepath.Join(dir, "n3.tar.gz") + " exists; add --force to replace it"}
	if !slices.Equal(h.failed, want) {
		t.Errorf("failed\n%q\nwant\n%q", h.failed, want)
	}
	if _, err := Run(context.Background(), h.options(RunOptions{Output: filepath.Join(dir, "x.tgz"), PerHost: true})); err == nil ||
		!strings.Contains(err.Error(), "names a directory for one HOST.tar.gz per node, not an archive") {
		t.Errorf("archive name per host: %v", err)
	}
}

// TestCheckTarget: a directory that is not a snapshot is never written
// into, even with force; an empty one is.
func TestCheckTarget(t *testing.T) {
	dir := t.TempDir()
	if err := CheckTarget(dir, false); err != nil {
		t.Errorf("empty directory: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600)
	if err := CheckTarget(dir, true); err == nil || !strings.Contains(err.Error(), "is a directory that is not a snapshot") {
		t.Errorf("directory of other files: %v", err)
	}
}

// TestRunWritesEachNodeAsItArrives: with PerHost, a node handed to write is
// on disk when write returns (the capture holds nothing of it after), a
// node that failed is counted and named; a record appended after (the ping
// mesh's) is read back with every item written before, twice over.
func TestRunWritesEachNodeAsItArrives(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	h := &heard{}
	o := h.options(RunOptions{Output: dir, PerHost: true})
	var written []Written
	o.Capture = func(_ context.Context, write WriteFunc) ([]Node, error) {
		for _, host := range []string{"n1", "n2"} {
			w, ok := write(node(host))
			if !ok {
				t.Fatalf("%s not written", host)
			}
			if _, err := Read(w.Path); err != nil {
				t.Fatalf("%s not on disk when write returned: %v", host, err)
			}
			written = append(written, w)
		}
		if _, ok := write(Node{Host: "n3", Err: errors.New("unreachable")}); ok {
			t.Error("a failed node was written")
		}
		return []Node{node("n4")}, nil // not handed to write: written after
	}
	failed, err := Run(context.Background(), o)
	if err != nil || failed != 1 {
		t.Fatalf("failed %d, err %v", failed, err)
	}
	if want := []string{"n1.tar.gz 2 items (1 missing, 0 denied, 0 errors) in 0 ms", "n2.tar.gz 2 items (1 missing, 0 denied, 0 errors) in 0 ms", "n4.tar.gz 2 items (1 missing, 0 denied, 0 errors) in 0 ms"}; !slices.Equal(h.wrote, want) {
		t.Errorf("wrote %q", h.wrote)
	}
	if !slices.Equal(h.failed, []string{"n3: unreachable"}) {
		t.Errorf("failed %q", h.failed)
	}
	w := written[0]
	for i, rec := range []string{"ping-mesh", "extra"} {
		if w, err = AppendCmd(w, Item{Name: rec, Argv: []string{"sparkrig", rec}}, []byte(rec+" output\n")); err != nil {
			t.Fatal(err)
		}
		s, err := Read(w.Path)
		if err != nil {
			t.Fatalf("after %s: %v", rec, err)
		}
		if len(s.Manifest.Items) != 3+i || s.Manifest.Host != "n1" {
			t.Fatalf("after %s: %d items, host %q", rec, len(s.Manifest.Items), s.Manifest.Host)
		}
		if b, ok := s.File("/proc/sys/net/core/rmem_max"); !ok || string(b) != "212992\n" {
			t.Errorf("after %s: the file written before reads %q", rec, b)
		}
		for _, c := range []string{"ping-mesh", "extra"}[:i+1] {
			if b, _, ok := s.Cmd(c); !ok || string(b) != c+" output\n" {
				t.Errorf("after %s: %s reads %q, %v", rec, c, b, ok)
			}
		}
	}
}
