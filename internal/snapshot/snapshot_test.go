package snapshot

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func sample() *Snapshot {
	s := New("spark-01")
	s.Manifest.CapturedAt = time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	s.Manifest.ToolVersion = "test"
	s.Manifest.Capturer = "sparkrig"
	s.AddFile("/proc/meminfo", []byte("MemTotal:       128479340 kB\nCmaTotal:              0 kB\n"))
	s.AddFile("/sys/class/net/enp1s0f1np1/mtu", []byte("9000\n"))
	s.AddLink("/sys/class/net/enp1s0f1np1/device", "../../../0000:01:00.1")
	s.AddMissing(KindFile, "/etc/nccl.conf", StatusMissing, "no such file")
	s.AddCmd(Item{Name: "uname", Argv: []string{"uname", "-a"}}, []byte("Linux spark-01 6.11.0-1016-nvidia aarch64\n"), nil)
	s.AddCmd(Item{Name: "ibv_devinfo", Argv: []string{"ibv_devinfo", "-v"}, ExitCode: 255}, nil, []byte("Failed to get IB devices list\n"))
	s.AddMissing(KindCmd, "nvidia-smi-q", StatusMissing, "executable file not found in $PATH")
	return s
}

func TestRoundTrip(t *testing.T) {
	want := sample()
	dir := t.TempDir()
	for _, dst := range []string{filepath.Join(dir, "tree"), filepath.Join(dir, "node.tar.gz")} {
		if err := want.Write(dst); err != nil {
			t.Fatal(err)
		}
		got, err := Read(dst)
		if err != nil {
			t.Fatalf("read %s: %v", dst, err)
		}
		if diff := cmp.Diff(want.Manifest, got.Manifest); diff != "" {
			t.Errorf("%s manifest (-want +got):\n%s", dst, diff)
		}
		if diff := cmp.Diff(want.Data, got.Data); diff != "" {
			t.Errorf("%s data (-want +got):\n%s", dst, diff)
		}
		if got.Source != dst {
			t.Errorf("Source = %q, want %q", got.Source, dst)
		}
	}
}

func TestAccessors(t *testing.T) {
	s := sample()
	if b, ok := s.File("/sys/class/net/enp1s0f1np1/mtu"); !ok || string(b) != "9000\n" {
		t.Errorf("File(mtu) = %q, %v", b, ok)
	}
	if _, ok := s.File("/etc/nccl.conf"); ok {
		t.Error("File(/etc/nccl.conf) found, want missing")
	}
	if it, ok := s.Item(KindFile, "/etc/nccl.conf"); !ok || it.Status != StatusMissing {
		t.Errorf("Item(nccl.conf) = %+v, %v", it, ok)
	}
	if tgt, ok := s.Link("/sys/class/net/enp1s0f1np1/device"); !ok || tgt != "../../../0000:01:00.1" {
		t.Errorf("Link = %q, %v", tgt, ok)
	}
	if out, it, ok := s.Cmd("uname"); !ok || it.ExitCode != 0 || string(out) != "Linux spark-01 6.11.0-1016-nvidia aarch64\n" {
		t.Errorf("Cmd(uname) = %q, %+v, %v", out, it, ok)
	}
	if _, it, ok := s.Cmd("ibv_devinfo"); !ok || it.ExitCode != 255 || string(s.Stderr("ibv_devinfo")) != "Failed to get IB devices list\n" {
		t.Errorf("Cmd(ibv_devinfo) = %+v, %v", it, ok)
	}
	if _, it, ok := s.Cmd("nvidia-smi-q"); ok || it.Status != StatusMissing {
		t.Errorf("Cmd(nvidia-smi-q) = %+v, %v; want missing", it, ok)
	}
	if got := s.List("/sys/class/net"); !cmp.Equal(got, []string{"enp1s0f1np1"}) {
		t.Errorf("List(/sys/class/net) = %v", got)
	}
	if got := s.List("/sys/class/net/enp1s0f1np1"); !cmp.Equal(got, []string{"device", "mtu"}) {
		t.Errorf("List(enp1s0f1np1) = %v", got)
	}
}

func TestBadSnapshots(t *testing.T) {
	dir := t.TempDir()
	var good bytes.Buffer
	if err := sample().WriteTarGz(&good); err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noManifest := New("x")
	noManifest.Data["files/proc/meminfo"] = []byte("x")
	var nm bytes.Buffer
	// Write an archive without manifest.json by hand-building one.
	if err := (&Snapshot{Data: noManifest.Data}).writeTarGzNoManifest(&nm); err != nil {
		t.Fatal(err)
	}
	emptyDir := filepath.Join(dir, "empty")
	os.Mkdir(emptyDir, 0o755)
	badJSON := filepath.Join(dir, "badjson")
	os.Mkdir(badJSON, 0o755)
	os.WriteFile(filepath.Join(badJSON, "manifest.json"), []byte("{not json"), 0o644)
	lying := filepath.Join(dir, "lying")
	os.Mkdir(lying, 0o755)
	os.WriteFile(filepath.Join(lying, "manifest.json"), []byte(`{"schema":1,"host":"h","items":[{"kind":"file","name":"/proc/meminfo","status":"ok"}]}`), 0o644)
	tests := []struct {
		name, path, want string
	}{
		{"truncated", write("trunc.tar.gz", good.Bytes()[:good.Len()/2]), "bad snapshot: archive is truncated"},
		{"garbage", write("junk.tar.gz", []byte("\x00\x01garbage not gzip")), "bad snapshot: not a gzip archive"},
		{"no manifest in archive", write("nm.tar.gz", nm.Bytes()), "bad snapshot: no manifest.json in archive"},
		{"empty dir", emptyDir, "bad snapshot: no manifest.json"},
		{"bad json", badJSON, "bad snapshot: manifest.json is not valid JSON"},
		{"manifest lists absent file", lying, "bad snapshot: manifest lists /proc/meminfo but the snapshot holds no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(tt.path)
			if err == nil || !errors.Is(err, ErrBadSnapshot) {
				t.Fatalf("Read = %v, want ErrBadSnapshot", err)
			}
			if got := err.Error(); len(got) < len(tt.want) || got[:len(tt.want)] != tt.want {
				t.Errorf("error = %q, want prefix %q", got, tt.want)
			}
		})
	}
}

func FuzzReadTarGz(f *testing.F) {
	var good bytes.Buffer
	if err := sample().WriteTarGz(&good); err != nil {
		f.Fatal(err)
	}
	f.Add(good.Bytes())
	f.Add(good.Bytes()[:100])
	f.Add([]byte{})
	// The hostile cases: many items, a negative schema, directory headers,
	// a manifest that is not an object, items that are not a list.
	f.Add(tarGz(f, tarEntry{name: manifestName, body: manyItemsManifest(1000)}))
	f.Add(tarGz(f, tarEntry{name: manifestName, body: []byte(`{"schema":-1,"host":"h","items":[]}`)}))
	f.Add(tarGz(f, tarEntry{name: "d/", typ: tar.TypeDir}, tarEntry{name: "files/x", typ: tar.TypeSymlink}, tarEntry{name: manifestName, body: []byte(`{"schema":1,"host":"h","items":[{"kind":"link","name":"/x","status":"ok"}]}`)}))
	f.Add(tarGz(f, tarEntry{name: manifestName, body: []byte(`[1,2]`)}))
	f.Add(tarGz(f, tarEntry{name: manifestName, body: []byte(`{"schema":1,"host":"h","Items":{"a":1},"items":null}`)}))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ReadTarGz(bytes.NewReader(b))
		if err != nil {
			return
		}
		if s.Manifest.Host == "" {
			t.Fatal("accepted a snapshot with no host")
		}
		if len(s.Manifest.Items) > maxItems {
			t.Fatalf("accepted %d items", len(s.Manifest.Items))
		}
		// The index answers as a scan of what was accepted.
		for _, it := range s.Manifest.Items {
			if it.Kind == KindCmd {
				continue
			}
			if got, ok := s.Item(it.Kind, it.Name); ok {
				if want, _ := scanItem(s, it.Kind, path.Clean("/"+it.Name)); got.Name != want.Name || got.Kind != want.Kind {
					t.Fatalf("Item(%s, %s) = %+v, scan %+v", it.Kind, it.Name, got, want)
				}
			}
		}
	})
}

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{"spark-01": "spark-01", "root@10.0.0.2:2222": "root_10.0.0.2_2222", "a/b": "a_b", "nœud": "n_ud"} {
		if got := SafeName(in); got != want {
			t.Errorf("SafeName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWrittenForTheOwnerOnly: an archive, a directory snapshot and every
// entry are readable by their owner alone (they hold node configuration).
func TestWrittenForTheOwnerOnly(t *testing.T) {
	dir := t.TempDir()
	s := sample()
	arch := filepath.Join(dir, "n.tar.gz")
	if err := s.Write(arch); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(arch); st.Mode().Perm() != 0o600 {
		t.Errorf("archive mode %o, want 600", st.Mode().Perm())
	}
	f, _ := os.Open(arch)
	defer f.Close()
	gz, _ := gzip.NewReader(f)
	tr := tar.NewReader(gz)
	for h, err := tr.Next(); err == nil; h, err = tr.Next() {
		if h.Mode != 0o600 {
			t.Errorf("entry %s mode %o, want 600", h.Name, h.Mode)
		}
	}
	tree := filepath.Join(dir, "tree")
	if err := s.Write(tree); err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(tree, func(p string, d os.DirEntry, err error) error {
		st, _ := os.Stat(p)
		if want := os.FileMode(0o600); d.IsDir() && st.Mode().Perm() != 0o700 || !d.IsDir() && st.Mode().Perm() != want {
			t.Errorf("%s mode %o", p, st.Mode().Perm())
		}
		return nil
	})
}

// TestDirectorySnapshotFollowsNothing: a directory snapshot's symlink to
// /dev/zero and a FIFO are skipped, not read (either would exhaust memory
// or hang), and a FIFO given as the snapshot itself is refused at once.
func TestDirectorySnapshotFollowsNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "snap")
	if err := sample().Write(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "files", "zero")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "cmds", "fifo.stdout"), 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	s, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Data["files/zero"]; ok {
		t.Error("the symlink to /dev/zero was followed")
	}
	if _, ok := s.Data["cmds/fifo.stdout"]; ok {
		t.Error("the FIFO was read")
	}
	fifo := filepath.Join(t.TempDir(), "snap.tar.gz")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(fifo); err == nil || !strings.Contains(err.Error(), "neither a directory nor a regular file") {
		t.Errorf("FIFO as a snapshot: %v", err)
	}
}

// TestAbsIsClean: Abs is path.Clean("/" + p) for any p made of path
// pieces, the clean ones returned as they are.
func TestAbsIsClean(t *testing.T) {
	pieces := []string{"/", "a", "b", ".", "..", "//", "sys", "/.", "/..", "./", "../"}
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 50000; i++ {
		var b strings.Builder
		for n := r.IntN(7); n > 0; n-- {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		p := b.String()
		if got, want := Abs(p), path.Clean("/"+p); got != want {
			t.Fatalf("Abs(%q) = %q, want %q", p, got, want)
		}
		if isCleanAbs(p) != (path.Clean(p) == p && strings.HasPrefix(p, "/")) {
			t.Fatalf("isCleanAbs(%q) = %v", p, isCleanAbs(p))
		}
	}
}
