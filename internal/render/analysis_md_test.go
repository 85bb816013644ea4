package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// The Markdown of analysed real samples: a compact results table, then each
// table's and run's measured rows folded into <details>.
func TestMarkdownAnalyses(t *testing.T) {
	r := &report.Report{Analyses: analysedSamples(t)}
	var b bytes.Buffer
	if err := Markdown(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| all_gather, 2 ranks on 2 nodes (busbw plateau) | 20.95 GB/s | 21.97 GB/s | 0.954 | 83.8 % | WARNING |\n",
		"<details><summary>all_gather: 1 size, 2 ranks</summary>\n\n| size | count | type | redop | time µs |",
		"| 16G | 2147483648 | float | none | 453650 | 37.87 | 18.94 | 0 | 410049 | 41.9 | 20.95 | 0 |\n\n</details>\n",
		"<details><summary>ib_write_bw on rocep1s0f0: 5 rows</summary>\n\n| bytes | iterations | BW peak Gb/s | BW average Gb/s | MsgRate Mpps |",
		"<details><summary>ib_write_bw on roceP2p1s0f0: 6 rows</summary>",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	// 7 NCCL tables (1 + 1 + 5) and 2 perftest runs
	if n := strings.Count(md, "<details>"); n != 9 || strings.Count(md, "</details>") != 9 {
		t.Errorf("%d details blocks, want 9", n)
	}
}
