package snapshot

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

const manifestName = "manifest.json"

// maxSnapshotBytes bounds what a snapshot may expand to, maxEntryBytes one
// entry, maxEntries their number (every archive header counts, kept or
// not), maxManifestBytes the manifest and maxItems its items, all checked
// before anything is read or allocated, so a hostile or corrupt snapshot
// cannot exhaust memory: reading one stays under 256 MiB of RSS. A real
// node's capture has a few thousand items, a manifest of a few hundred KiB
// and at most 64 MiB of data (the capture stream's own bound).
const (
	maxSnapshotBytes = 128 << 20
	maxEntryBytes    = 64 << 20
	maxEntries       = 200_000
	maxManifestBytes = 32 << 20
	maxItems         = 200_000
)

// ErrBadSnapshot marks a snapshot that cannot be read (truncated, no manifest, garbage).
var ErrBadSnapshot = errors.New("bad snapshot")

func badf(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrBadSnapshot, fmt.Sprintf(format, a...))
}

// keys returns the data keys in sorted order, so output is deterministic.
func (s *Snapshot) keys() []string {
	ks := make([]string, 0, len(s.Data))
	for k := range s.Data {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func (s *Snapshot) manifestJSON() ([]byte, error) {
	return json.MarshalIndent(s.Manifest, "", "  ")
}

// Write stores the snapshot at dst: a .tar.gz (or .tgz) archive when the name
// says so, a directory otherwise.
func (s *Snapshot) Write(dst string) error {
	if IsArchiveName(dst) {
		// Snapshots hold a node's configuration: readable by their owner only.
		f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		if err := s.WriteTarGz(f); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", dst, err)
		}
		return f.Close()
	}
	return s.WriteDir(dst)
}

// IsArchiveName reports whether name ends in .tar.gz or .tgz.
func IsArchiveName(name string) bool {
	return strings.HasSuffix(name, ".tar.gz") || strings.HasSuffix(name, ".tgz")
}

// WriteDir stores the snapshot as a directory tree at dir.
func (s *Snapshot) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, k := range s.keys() {
		p := filepath.Join(dir, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(p, s.Data[k], 0o600); err != nil {
			return err
		}
	}
	m, err := s.manifestJSON()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, manifestName), append(m, '\n'), 0o600)
}

// WriteTarGz writes the snapshot as a gzip-compressed tar stream.
func (s *Snapshot) WriteTarGz(w io.Writer) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	if err := s.writeEntries(tw); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// writeEntries writes the manifest, then the data in key order.
func (s *Snapshot) writeEntries(tw *tar.Writer) error {
	m, err := s.manifestJSON()
	if err != nil {
		return err
	}
	mtime := s.Manifest.CapturedAt
	if mtime.IsZero() {
		mtime = time.Unix(0, 0)
	}
	put := func(name string, b []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(b)), ModTime: mtime, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	if err := put(manifestName, m); err != nil {
		return err
	}
	for _, k := range s.keys() {
		if err := put(k, s.Data[k]); err != nil {
			return err
		}
	}
	return nil
}

// Read loads a snapshot from a directory or a .tar.gz archive. Errors wrap
// ErrBadSnapshot when the content is not a valid snapshot.
func Read(src string) (*Snapshot, error) {
	st, err := os.Stat(src)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() && !st.Mode().IsRegular() {
		return nil, badf("%s is neither a directory nor a regular file", src)
	}
	var s *Snapshot
	if st.IsDir() {
		s, err = ReadFS(noFollowFS(src))
	} else {
		var f *os.File
		if f, err = openRegular(src); err != nil {
			return nil, err
		}
		defer f.Close()
		s, err = ReadTarGz(f)
	}
	if err != nil {
		return nil, err
	}
	s.Source = src
	return s, nil
}

// ReadFS loads a snapshot from a directory tree.
func ReadFS(fsys fs.FS) (*Snapshot, error) {
	s := &Snapshot{Data: map[string][]byte{}}
	mb, err := readManifestFile(fsys)
	if err != nil {
		return nil, err
	}
	if err := s.decodeManifest(mb); err != nil {
		return nil, err
	}
	var total int64
	entries := 0
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || p == manifestName || !(strings.HasPrefix(p, "files/") || strings.HasPrefix(p, "cmds/")) {
			return nil
		}
		// Only regular files: a symlink (to /dev/zero, say) is never
		// followed, a FIFO never opened.
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if entries++; entries > maxEntries {
			return badf("more than %d entries", maxEntries)
		}
		if info.Size() > maxEntryBytes {
			return badf("%s is larger than %d MiB", p, maxEntryBytes>>20)
		}
		if total += info.Size(); total > maxSnapshotBytes {
			return badf("larger than %d MiB", maxSnapshotBytes>>20)
		}
		f, err := fsys.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxEntryBytes+1))
		if err != nil {
			return err
		}
		if len(b) > maxEntryBytes {
			return badf("%s is larger than %d MiB", p, maxEntryBytes>>20)
		}
		s.Data[p] = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, s.validate()
}

// ReadTarGz loads a snapshot from a gzip-compressed tar stream.
func ReadTarGz(r io.Reader) (*Snapshot, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, badf("not a gzip archive (%v)", err)
	}
	tr := tar.NewReader(gz)
	s := &Snapshot{Data: map[string][]byte{}}
	var manifest []byte
	var total int64
	entries := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, badf("archive is truncated or corrupt (%v)", err)
		}
		// Every header counts, kept or not, so that a stream of
		// directory or link headers cannot spin for ever either.
		if entries++; entries > maxEntries {
			return nil, badf("more than %d entries", maxEntries)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := strings.TrimPrefix(path.Clean(h.Name), "./")
		if name == manifestName && h.Size > maxManifestBytes {
			return nil, badf("%s is larger than %d MiB", manifestName, maxManifestBytes>>20)
		}
		if name != manifestName && !strings.HasPrefix(name, "files/") && !strings.HasPrefix(name, "cmds/") {
			continue // not part of a snapshot: skipped unread
		}
		if h.Size > maxEntryBytes {
			return nil, badf("%s is larger than %d MiB", name, maxEntryBytes>>20)
		}
		if total += h.Size; total > maxSnapshotBytes {
			return nil, badf("larger than %d MiB", maxSnapshotBytes>>20)
		}
		var buf bytes.Buffer
		buf.Grow(int(h.Size)) // bounded above; growing by doubling would hold twice the entry
		if _, err := io.CopyN(&buf, tr, h.Size); err != nil {
			return nil, badf("archive is truncated at %s (%v)", name, err)
		}
		switch {
		case name == manifestName:
			manifest = buf.Bytes()
		case strings.HasPrefix(name, "files/") || strings.HasPrefix(name, "cmds/"):
			s.Data[name] = buf.Bytes()
		}
	}
	if manifest == nil {
		return nil, badf("no %s in archive", manifestName)
	}
	if err := s.decodeManifest(manifest); err != nil {
		return nil, err
	}
	return s, s.validate()
}

// decodeManifest reads the manifest's items one at a time, so that their
// number is refused past maxItems before they are held (an item of three
// bytes in the JSON takes some 150 in memory).
func (s *Snapshot) decodeManifest(b []byte) error {
	bad := func(err error) error { return badf("%s is not valid JSON (%v)", manifestName, err) }
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil {
		return bad(err)
	} else if t != json.Delim('{') {
		return badf("%s is not a JSON object", manifestName)
	}
	rest := map[string]json.RawMessage{}
	items := []Item{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return bad(err)
		}
		key, _ := t.(string)
		if !strings.EqualFold(key, "items") {
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return bad(err)
			}
			rest[key] = v
			continue
		}
		if t, err := dec.Token(); err != nil {
			return bad(err)
		} else if t == nil {
			continue
		} else if t != json.Delim('[') {
			return badf("%s: items is not a list", manifestName)
		}
		items = items[:0]
		for dec.More() {
			if len(items) >= maxItems {
				return badf("%s lists more than %d items", manifestName, maxItems)
			}
			var it Item
			if err := dec.Decode(&it); err != nil {
				return bad(err)
			}
			items = append(items, it)
		}
		if _, err := dec.Token(); err != nil {
			return bad(err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return bad(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badf("%s has data after its object", manifestName)
	}
	head, err := json.Marshal(rest)
	if err != nil {
		return bad(err)
	}
	var m Manifest
	if err := json.Unmarshal(head, &m); err != nil {
		return bad(err)
	}
	m.Items = items
	s.Manifest = m
	return nil
}

// readManifestFile reads a directory snapshot's manifest: a regular file
// (never a symlink, FIFO or device) of at most maxManifestBytes.
func readManifestFile(fsys fs.FS) ([]byte, error) {
	f, err := fsys.Open(manifestName)
	if err != nil {
		if errors.Is(err, errNotRegular) {
			return nil, badf("%s is not a regular file", manifestName)
		}
		return nil, badf("no %s", manifestName)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, badf("%s: %v", manifestName, err)
	}
	if !st.Mode().IsRegular() {
		return nil, badf("%s is not a regular file", manifestName)
	}
	if st.Size() > maxManifestBytes {
		return nil, badf("%s is larger than %d MiB", manifestName, maxManifestBytes>>20)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return nil, badf("%s: %v", manifestName, err)
	}
	if len(b) > maxManifestBytes {
		return nil, badf("%s is larger than %d MiB", manifestName, maxManifestBytes>>20)
	}
	return b, nil
}

func (s *Snapshot) validate() error {
	if err := s.Validate(); err != nil {
		return badf("%v", err)
	}
	return nil
}
