package snapshot

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
)

// An archive written by WriteArchive is two gzip members: the manifest and
// the data (a tar stream without its end), then the tar's end alone. A
// record learnt after the node's evidence was written (the ping mesh runs
// once every node has arrived) replaces the second member: the record, the
// manifest that lists it, and the end. Nothing written before is read
// again but the manifest, nor compressed twice. Readers that extract in
// order (tar, ReadTarGz) take the later manifest.

// Written is where WriteArchive put a snapshot and where its end member
// starts.
type Written struct {
	Path string
	// Manifest is where the part that opens with the latest manifest
	// starts; End where the member holding the tar's end starts.
	Manifest, End int64
}

// WriteArchive writes s to dst (a .tar.gz) so that AppendCmd can add a
// record later.
func (s *Snapshot) WriteArchive(dst string) (Written, error) {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return Written{}, err
	}
	end, err := s.writeMember(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Written{}, fmt.Errorf("write %s: %w", dst, err)
	}
	return Written{Path: dst, End: end}, nil
}

// writeMember writes s's entries as one gzip member at f's offset, then
// the tar's end as a member of its own; it returns where that end starts.
func (s *Snapshot) writeMember(f *os.File) (int64, error) {
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	err := s.writeEntries(tw)
	if err == nil {
		err = tw.Flush()
	}
	if err == nil {
		err = gz.Close()
	}
	if err != nil {
		return 0, err
	}
	end, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	return end, writeEnd(f)
}

// writeEnd writes the tar's end as a gzip member of its own.
func writeEnd(w io.Writer) error {
	gz := gzip.NewWriter(w)
	if err := tar.NewWriter(gz).Close(); err != nil {
		return err
	}
	return gz.Close()
}

// AppendCmd adds a command's record (as AddCmd makes it) to the archive at
// w, with the manifest that lists it; it returns where the archive's end
// now starts.
func AppendCmd(w Written, it Item, stdout []byte) (Written, error) {
	f, err := os.OpenFile(w.Path, os.O_RDWR, 0)
	if err != nil {
		return w, err
	}
	defer f.Close()
	s, err := readManifest(io.NewSectionReader(f, w.Manifest, w.End-w.Manifest))
	if err != nil {
		return w, fmt.Errorf("%s: %w", w.Path, err)
	}
	s.AddCmd(it, stdout, nil)
	if err := f.Truncate(w.End); err != nil {
		return w, err
	}
	if _, err := f.Seek(w.End, io.SeekStart); err != nil {
		return w, err
	}
	end, err := s.writeMember(f)
	if err != nil {
		return w, fmt.Errorf("write %s: %w", w.Path, err)
	}
	return Written{Path: w.Path, Manifest: w.End, End: end}, nil
}

// readManifest reads the manifest that opens a part of an archive
// WriteArchive or AppendCmd wrote, as a snapshot without data.
func readManifest(r io.Reader) (*Snapshot, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, badf("not a gzip archive (%v)", err)
	}
	tr := tar.NewReader(gz)
	h, err := tr.Next()
	if err != nil || h.Name != manifestName || h.Size > maxManifestBytes {
		return nil, badf("the archive's part does not open with its %s", manifestName)
	}
	b := make([]byte, h.Size)
	if _, err := io.ReadFull(tr, b); err != nil {
		return nil, badf("archive is truncated at %s (%v)", manifestName, err)
	}
	s := &Snapshot{Data: map[string][]byte{}}
	if err := s.decodeManifest(b); err != nil {
		return nil, err
	}
	return s, nil
}
