package snapshot

import (
	"archive/tar"
	"compress/gzip"
	"io"
)

// writeTarGzNoManifest writes only the data files, to test a manifest-less archive.
func (s *Snapshot) writeTarGzNoManifest(w io.Writer) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	for _, k := range s.keys() {
		if err := tw.WriteHeader(&tar.Header{Name: k, Mode: 0o644, Size: int64(len(s.Data[k])), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(s.Data[k]); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}
