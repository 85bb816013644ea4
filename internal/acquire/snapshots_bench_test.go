package acquire_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sparkrig/sparkrig/internal/acquire"
	"github.com/sparkrig/sparkrig/internal/fix"
)

// The snapshot benchmarks report the peak memory of reading many large or
// hostile snapshots as doctor --snapshot does. Run one per process:
//
//	go test ./internal/acquire -run '^$' -bench 'BenchmarkSnapshots/cap-x16$' -benchtime 1x

// writeArchive writes a snapshot archive of entries zero-filled entries of
// size bytes each, streamed (the benchmark must not hold them itself).
func writeArchive(b *testing.B, p string, entries int, size int64) {
	writeArchiveManifest(b, p, entries, size, []byte(`{"schema":1,"host":"big","captured_at":"2026-11-24T00:00:00Z","tool_version":"bench","capturer":"sh","items":[]}`))
}

// writeArchiveManifest is writeArchive with the manifest m.
func writeArchiveManifest(b *testing.B, p string, entries int, size int64, m []byte) {
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	gz, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	tw := tar.NewWriter(gz)
	put := func(name string, size int64, r io.Reader) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: size, Typeflag: tar.TypeReg}); err != nil {
			b.Fatal(err)
		}
		if _, err := io.CopyN(tw, r, size); err != nil {
			b.Fatal(err)
		}
	}
	put("manifest.json", int64(len(m)), bytesReader(m))
	for i := 0; i < entries; i++ {
		put(fmt.Sprintf("files/junk/%d", i), size, zeroReader{})
	}
	if err := tw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		b.Fatal(err)
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func bytesReader(b []byte) io.Reader { return &sliceReader{b} }

type sliceReader struct{ b []byte }

func (r *sliceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

func BenchmarkSnapshots(b *testing.B) {
	// 16 snapshots at the 128 MiB cap (2 entries of the 64 MiB entry cap).
	b.Run("cap-x16", func(b *testing.B) {
		p := filepath.Join(b.TempDir(), "big.tar.gz")
		writeArchive(b, p, 2, 64<<20-1<<10) // the manifest takes the rest of the cap
		paths := make([]string, 16)
		for i := range paths {
			paths[i] = p
		}
		benchSnapshots(b, paths, 0)
	})
	// A 30 KB archive whose manifest lists 2 million empty items (it took
	// 5 GB): refused as the items are decoded.
	b.Run("manifest-items-2M", func(b *testing.B) {
		p := filepath.Join(b.TempDir(), "items.tar.gz")
		var m bytes.Buffer
		m.WriteString(`{"schema":1,"host":"big","items":[{}`)
		for range 2_000_000 - 1 {
			m.WriteString(`,{}`)
		}
		m.WriteString("]}")
		writeArchiveManifest(b, p, 0, 0, m.Bytes())
		benchSnapshots(b, []string{p}, 1)
	})
	// 500,000 empty entries: refused past the entry cap.
	b.Run("entries-500k", func(b *testing.B) {
		p := filepath.Join(b.TempDir(), "many.tar.gz")
		writeArchive(b, p, 500_000, 0)
		benchSnapshots(b, []string{p}, 1)
	})
}

func benchSnapshots(b *testing.B, paths []string, wantBad int) {
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nodes := acquire.Snapshots(paths, fix.Evidence)
		bad := 0
		for _, n := range nodes {
			if n.Err != nil {
				bad++
				if wantBad == 0 {
					b.Fatalf("%s: %v", n.Source, n.Err)
				}
			}
		}
		if bad != wantBad {
			b.Fatalf("%d snapshots refused, want %d", bad, wantBad)
		}
	}
	b.StopTimer()
	b.ReportMetric(peakRSSMiB(), "peak-RSS-MiB")
}
