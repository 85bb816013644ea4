package analyze

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/sparkrig/sparkrig/internal/results"
)

// BenchmarkReaderNCCLLog is analyze's throughput on a large NCCL_DEBUG=INFO
// log (the real DGX Spark sample repeated to 64 MiB): detection, the paste
// normalisation, the error signatures, parsing and judging.
func BenchmarkReaderNCCLLog(b *testing.B) {
	unit := verbatim(b, sparkLog)
	data := bytes.Repeat(unit, (64<<20)/len(unit)+1)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		a := Reader("bench", bytes.NewReader(data), Options{})
		if a.Error != "" {
			b.Fatal(a.Error)
		}
	}
	if cpu = processCPU() - cpu; cpu > 0 {
		b.ReportMetric(float64(len(data))*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}

// BenchmarkReaderWarnHeavy is analyze's throughput on a log of NCCL WARN
// and error lines (every such line of the pasted samples, repeated to 16
// MiB): the error catalogue's path. Goal: 100 MB per CPU second or more.
func BenchmarkReaderWarnHeavy(b *testing.B) {
	files, err := filepath.Glob("testdata/pasted/*.txt")
	if err != nil {
		b.Fatal(err)
	}
	var head, rest []byte
	for _, f := range files {
		name, _ := filepath.Rel("testdata", f)
		v := verbatim(b, name)
		if !bytes.Contains(v, []byte("NCCL WARN")) {
			continue
		}
		for _, l := range bytes.Split(v, []byte("\n")) {
			if !bytes.Contains(l, []byte("WARN")) && !bytes.Contains(l, []byte("rror")) && !bytes.Contains(l, []byte("ailed")) {
				continue
			}
			if _, ok := results.NCCLOrigin(l); ok && len(head) == 0 {
				head = append(append(head, l...), '\n')
				continue
			}
			rest = append(append(rest, l...), '\n')
		}
	}
	unit := append(head, rest...)
	data := bytes.Repeat(unit, (16<<20)/len(unit)+1)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		a := Reader("bench", bytes.NewReader(data), Options{})
		if a.Error != "" {
			b.Fatal(a.Error)
		}
	}
	if cpu = processCPU() - cpu; cpu > 0 {
		b.ReportMetric(float64(len(data))*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}
