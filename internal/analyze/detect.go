package analyze

import (
	"bytes"
	"errors"
)

// Input formats.
const (
	FormatNCCLTests      = "nccl-tests"
	FormatNCCLTestsJSON  = "nccl-tests-json"
	FormatNCCLLog        = "nccl-log"
	FormatPerftest       = "perftest"
	FormatIperf3         = "iperf3"
	FormatNVBandwidth    = "nvbandwidth"
	FormatAllReduceBench = "all_reduce_bench"
	// FormatSparkrigJSON is `sparkrig bench gpu collective --format json`
	// (a report document) or its --json-file (a JSON array of tables).
	FormatSparkrigJSON = "sparkrig-json"
)

// Formats lists the accepted --input-format values.
var Formats = []string{FormatNCCLTests, FormatNCCLTestsJSON, FormatNCCLLog, FormatPerftest, FormatIperf3, FormatNVBandwidth, FormatAllReduceBench, FormatSparkrigJSON}

// Detection errors.
var (
	ErrEmpty   = errors.New("empty input")
	ErrBinary  = errors.New("binary data, not a benchmark output")
	ErrUnknown = errors.New("unknown format: not nccl-tests (text or -J JSON), an NCCL_DEBUG=INFO log, perftest, iperf3 -J or nvbandwidth output (force one with --input-format)")
)

// Detect names the format of an input from its first bytes.
func Detect(sample []byte) (string, error) {
	t := bytes.TrimSpace(sample)
	switch {
	case len(t) == 0:
		return "", ErrEmpty
	case isBinary(sample):
		return "", ErrBinary
	case t[0] == '{':
		switch {
		case bytes.Contains(t, []byte(`"command": "bench gpu collective"`)) || bytes.Contains(t, []byte(`"command":"bench gpu collective"`)):
			return FormatSparkrigJSON, nil
		case bytes.Contains(t, []byte(`"test_start"`)) || bytes.Contains(t, []byte(`"intervals"`)):
			return FormatIperf3, nil
		case bytes.Contains(t, []byte(`"nccl_version"`)) || bytes.Contains(t, []byte(`"average_bus_bandwi`)) || bytes.Contains(t, []byte(`"results"`)):
			return FormatNCCLTestsJSON, nil
		}
		return "", ErrUnknown
	case t[0] == '[' && (bytes.Contains(t, []byte(`"tool": "sparkrig"`)) || bytes.Contains(t, []byte(`"tool":"sparkrig"`))) && bytes.Contains(t, []byte(`"collective"`)):
		return FormatSparkrigJSON, nil
	case bytes.Contains(t, []byte("nvbandwidth Version")) || bytes.Contains(t, []byte("bandwidth (GB/s)")) && bytes.Contains(t, []byte("Running ")):
		return FormatNVBandwidth, nil
	case bytes.Contains(t, []byte(" BW Test")) || bytes.Contains(t, []byte(" Latency Test")) || bytes.Contains(t, []byte("#bytes")) && bytes.Contains(t, []byte("#iterations")):
		return FormatPerftest, nil
	case bytes.Contains(t, []byte("| payload |")):
		return FormatAllReduceBench, nil
	case bytes.Contains(t, []byte("busbw")) || bytes.Contains(t, []byte("# nThread ")) || bytes.Contains(t, []byte("# nccl-tests version")) || bytes.Contains(t, []byte("Collective test starting")):
		return FormatNCCLTests, nil
	case bytes.Contains(t, []byte("NCCL INFO")) || bytes.Contains(t, []byte("NCCL WARN")) || bytes.Contains(t, []byte("NCCL version ")):
		return FormatNCCLLog, nil
	}
	return "", ErrUnknown
}

func isBinary(sample []byte) bool {
	ctl := 0
	for _, c := range sample {
		if c == 0 {
			return true
		}
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != 0x1b {
			ctl++
		}
	}
	return ctl*20 > len(sample)
}
