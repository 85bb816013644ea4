package analyze

import (
	"bytes"
	"testing"
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
