package snapshot

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tarGz builds an archive of the given entries, in order.
func tarGz(t testing.TB, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o600, Size: int64(len(e.body)), Typeflag: typ}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type tarEntry struct {
	name string
	body []byte
	typ  byte
}

// manyItemsManifest is a manifest of n empty items: three bytes each in
// the JSON, some 150 each once decoded.
func manyItemsManifest(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"schema":1,"host":"spark-01","items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("{}")
	}
	b.WriteString("]}")
	return b.Bytes()
}

// An archive whose manifest lists more items than the cap is refused as it
// is decoded, with memory bounded: a manifest of millions of empty items
// (a 30 KB archive) used to take gigabytes.
func TestHostileManifestOfManyItemsIsRefused(t *testing.T) {
	m := manyItemsManifest(10 * maxItems) // 6 MB of JSON, 2 million items
	arch := tarGz(t, tarEntry{name: manifestName, body: m})
	t.Logf("archive %d bytes, manifest %d bytes", len(arch), len(m))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := ReadTarGz(bytes.NewReader(arch))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("lists more than %d items", maxItems)) {
		t.Fatalf("err = %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
		t.Errorf("refusing it allocated %d MiB; the bound is 256 MiB", alloc>>20)
	}
	// At the cap it is read.
	if _, err := ReadTarGz(bytes.NewReader(tarGz(t, tarEntry{name: manifestName, body: manyItemsManifest(maxItems)}))); err == nil ||
		!strings.Contains(err.Error(), `unknown kind ""`) {
		t.Errorf("manifest at the cap: %v, want it decoded and then refused for its empty items", err)
	}
}

// A manifest larger than its cap is refused from its header, unread.
func TestHostileManifestTooLarge(t *testing.T) {
	big := append(manyItemsManifest(0), bytes.Repeat([]byte(" "), maxManifestBytes)...)
	_, err := ReadTarGz(bytes.NewReader(tarGz(t, tarEntry{name: manifestName, body: big})))
	if err == nil || !strings.Contains(err.Error(), "manifest.json is larger than 32 MiB") {
		t.Errorf("err = %v", err)
	}
}

// Headers that are not regular files count towards the entry cap too, so
// an endless run of them ends.
func TestHostileArchiveOfDirectoryHeaders(t *testing.T) {
	var es []tarEntry
	for i := range maxEntries + 1 {
		es = append(es, tarEntry{name: fmt.Sprintf("d%d/", i), typ: tar.TypeDir})
	}
	_, err := ReadTarGz(bytes.NewReader(tarGz(t, es...)))
	if err == nil || !strings.Contains(err.Error(), "more than 200000 entries") {
		t.Errorf("err = %v", err)
	}
}

// A schema below 1 is no schema this sparkrig reads.
func TestNegativeSchemaIsRefused(t *testing.T) {
	arch := tarGz(t, tarEntry{name: manifestName, body: []byte(`{"schema":-1,"host":"spark-01","items":[]}`)})
	if _, err := ReadTarGz(bytes.NewReader(arch)); err == nil || !strings.Contains(err.Error(), "manifest schema -1 is not a version") {
		t.Errorf("err = %v", err)
	}
}

// A directory snapshot's manifest.json that is a symlink to /dev/zero, or a
// FIFO no one writes, is refused at once rather than read without end.
func TestHostileDirectoryManifest(t *testing.T) {
	for _, kind := range []string{"symlink", "fifo"} {
		t.Run(kind, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "snap")
			if err := sample().Write(dir); err != nil {
				t.Fatal(err)
			}
			m := filepath.Join(dir, manifestName)
			os.Remove(m)
			switch kind {
			case "symlink":
				if err := os.Symlink("/dev/zero", m); err != nil {
					t.Fatal(err)
				}
			case "fifo":
				if err := syscall.Mkfifo(m, 0o600); err != nil {
					t.Skipf("no FIFOs here: %v", err)
				}
			}
			done := make(chan error, 1)
			go func() { _, err := Read(dir); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "manifest.json is not a regular file") {
					t.Errorf("err = %v", err)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("reading the snapshot still blocked after 60 s")
			}
		})
	}
}

// A regular file swapped for a FIFO after the walk listed it is opened
// without blocking and refused (noFollowFS), and a symlinked entry is never
// followed even when opened by name.
func TestNoFollowFSRefusesWhatIsNotRegular(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ok"), []byte("x"), 0o600)
	os.Symlink("/dev/zero", filepath.Join(dir, "zero"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	fsys := noFollowFS(dir)
	if f, err := fsys.Open("ok"); err != nil {
		t.Errorf("regular file: %v", err)
	} else {
		f.Close()
	}
	for _, name := range []string{"zero", "fifo"} {
		if f, err := fsys.Open(name); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: %v", name, err)
			if f != nil {
				f.Close()
			}
		}
	}
}

// The index behind Item, Link and List answers exactly what a scan of the
// manifest would, through appends, removals and a replaced list.
func TestIndexAgreesWithAScan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	names := []string{"/sys/class/net/a", "/sys/class/net/a/device", "/sys/class/net/a-b", "/sys/class/net/a-b/x",
		"/sys/class/net/b/mtu", "/sys/class/infiniband/rocep1s0f1/ports/1/gids/0", "/proc/meminfo", "/a", "/sys"}
	kinds := []string{KindFile, KindLink, KindCmd}
	statuses := []string{StatusOK, StatusMissing}
	s := New("spark-01")
	for step := range 400 {
		switch r.IntN(10) {
		case 0:
			s.Manifest.Items = slices.DeleteFunc(s.Manifest.Items, func(it Item) bool { return it.Name == names[step%len(names)] })
		case 1:
			s.Manifest.Items = slices.Clone(s.Manifest.Items)
		default:
			s.Manifest.Items = append(s.Manifest.Items, Item{Kind: kinds[r.IntN(3)], Name: names[r.IntN(len(names))], Status: statuses[r.IntN(2)], Target: fmt.Sprint(step)})
		}
		for _, n := range names {
			for _, k := range kinds {
				got, gok := s.Item(k, n)
				want, wok := scanItem(s, k, n)
				if gok != wok || gok && got.Target != want.Target {
					t.Fatalf("step %d: Item(%s, %s) = %v %v, scan %v %v", step, k, n, got, gok, want, wok)
				}
			}
			for _, d := range []string{n, path.Dir(n), "/"} {
				if got, want := s.List(d), scanList(s, d); !slices.Equal(got, want) {
					t.Fatalf("step %d: List(%s) = %v, scan %v", step, d, got, want)
				}
			}
		}
	}
}

func scanItem(s *Snapshot, kind, name string) (Item, bool) {
	for _, it := range s.Manifest.Items {
		if it.Name == name && (it.Kind == kind || (kind == KindFile && it.Kind == KindLink)) {
			return it, true
		}
	}
	return Item{}, false
}

func scanList(s *Snapshot, dir string) []string {
	dir = strings.TrimSuffix(path.Clean("/"+dir), "/") + "/"
	seen := map[string]bool{}
	for _, it := range s.Manifest.Items {
		if (it.Kind != KindFile && it.Kind != KindLink) || it.Status != StatusOK || !strings.HasPrefix(it.Name, dir) {
			continue
		}
		rest, _, _ := strings.Cut(strings.TrimPrefix(it.Name, dir), "/")
		if rest != "" {
			seen[rest] = true
		}
	}
	out := []string{}
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// BenchmarkManyLinks reads an archive whose manifest lists n links under
// /sys/class/net and asks, as facts do, for each one's listing and target:
// linear in n (a scan per question made 40,000 items take 36 s).
func BenchmarkManyLinks(b *testing.B) {
	for _, n := range []int{10_000, 40_000, 160_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := New("spark-01")
			for i := range n {
				s.AddLink(fmt.Sprintf("/sys/class/net/veth%d", i), "../../devices/virtual/net/x")
			}
			var buf bytes.Buffer
			if err := s.WriteTarGz(&buf); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				r, err := ReadTarGz(bytes.NewReader(buf.Bytes()))
				if err != nil {
					b.Fatal(err)
				}
				for _, nd := range r.List("/sys/class/net") {
					r.Link("/sys/class/net/" + nd)
					r.Link("/sys/class/net/" + nd + "/device")
				}
			}
		})
	}
}
