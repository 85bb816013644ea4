package analyze

import (
	"bytes"
	"path/filepath"
	"strconv"
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
	unit := bytes.Join(warnLines(b), nil)
	benchReader(b, bytes.Repeat(unit, (16<<20)/len(unit)+1))
}

// BenchmarkReaderWarnHeavyDistinct is BenchmarkReaderWarnHeavy with every
// line unlike any before it (a number at its end): the catalogue's own
// speed, which no answer remembered from an earlier line shortens.
func BenchmarkReaderWarnHeavyDistinct(b *testing.B) {
	lines := warnLines(b)
	var data []byte
	for n := 0; len(data) < 16<<20; n++ {
		l := lines[n%len(lines)]
		data = strconv.AppendInt(append(append(data, l[:len(l)-1]...), ' '), int64(n), 10)
		data = append(data, '\n')
	}
	benchReader(b, data)
}

// warnLines are the NCCL WARN and error lines of the pasted samples, each
// with its newline, one in NCCL's own shape first.
func warnLines(b *testing.B) [][]byte {
	files, err := filepath.Glob("testdata/pasted/*.txt")
	if err != nil {
		b.Fatal(err)
	}
	var head, rest [][]byte
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
			l = append(bytes.Clone(l), '\n')
			if _, ok := results.NCCLOrigin(l); ok && len(head) == 0 {
				head = append(head, l)
				continue
			}
			rest = append(rest, l)
		}
	}
	return append(head, rest...)
}

// benchReader reads data as analyze does, b.N times.
func benchReader(b *testing.B, data []byte) {
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
