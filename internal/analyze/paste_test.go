package analyze

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/sparkrig/sparkrig/internal/report"
)

// The robustness cases wrap a real sample the way a file or a paste
// reaches analyze: each must read as the sample itself does.
const sparkLog = "nccl-logs/09_dgx-spark_nccl2.28.9_net-ib-2-twins_gdr-disabled_gid0-on-second-twin.txt"

func toUTF16LE(s string, bom bool) []byte {
	var out []byte
	if bom {
		out = append(out, 0xFF, 0xFE)
	}
	for _, u := range utf16.Encode([]rune(s)) {
		out = append(out, byte(u), byte(u>>8))
	}
	return out
}

func TestPasteRobustness(t *testing.T) {
	clean := verbatim(t, sparkLog)
	want := Reader("clean", bytes.NewReader(clean), Options{})
	if want.Status != report.VerdictWarning || len(want.Items) != 1 {
		t.Fatalf("baseline %s %d items", want.Status, len(want.Items))
	}
	progress := bytes.Repeat([]byte("\r[=====>    ] 42%"), (2<<20)/17)
	cases := []struct {
		name string
		in   []byte
		note string
	}{
		{"leading NULs (copytruncate)", append(make([]byte, 3<<20), clean...), "3145728 NUL bytes at the start skipped"},
		{"UTF-16LE with BOM", toUTF16LE(string(clean), true), "the text is UTF-16LE"},
		{"UTF-16LE without BOM", toUTF16LE(string(clean), false), "the text is UTF-16LE"},
		{"a 2 MiB progress bar line first", append(append(progress, '\n'), clean...), "1 over-long line skipped"},
		{"redrawn line", append([]byte("downloading 10%\rdownloading 100%\n"), clean...), "1 line redrawn"},
		{"quoted and fenced", []byte("> ```\n> " + strings.ReplaceAll(string(clean), "\n", "\n> ") + "\n> ```\n"), "read without the quote marks"},
		{"kubectl --timestamps", []byte(prefixLines(string(clean), "2026-11-25T14:12:12.123456789Z ")), "read without the quote marks"},
		{"syslog", []byte(prefixLines(string(clean), "Nov 25 14:12:12 spark python3[4242]: ")), "read without the quote marks"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := Reader(c.name, bytes.NewReader(c.in), Options{})
			if a.Error != "" || a.Format != want.Format || a.Status != want.Status || len(a.Items) != 1 || a.Items[0].Value != want.Items[0].Value ||
				strings.Join(a.Data.NCCLLog.Hosts, ",") != strings.Join(want.Data.NCCLLog.Hosts, ",") {
				t.Fatalf("got %s %s %q items %+v, want %s %s", a.Format, a.Status, a.Error, a.Items, want.Format, want.Status)
			}
			if !strings.Contains(strings.Join(a.Notes, "\n"), c.note) {
				t.Errorf("notes %q lack %q", a.Notes, c.note)
			}
		})
	}
}

func prefixLines(s, p string) string {
	return p + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+p) + "\n"
}

// TestMarkdownLostHash: a forum's Markdown reads nccl-tests' "# " lines as
// headings and drops the "#"; the table still reads whole.
func TestMarkdownLostHash(t *testing.T) {
	clean := verbatim(t, "nccl-tests/04_all_gather_16G_2x_dgx-spark_GB10_new-header.txt")
	var stripped []string
	for _, l := range strings.Split(string(clean), "\n") {
		stripped = append(stripped, strings.TrimLeft(l, "# "))
	}
	want := Reader("clean", bytes.NewReader(clean), Options{})
	a := Reader("md", strings.NewReader(strings.Join(stripped, "\n")), Options{})
	if a.Error != "" || a.Format != FormatNCCLTests || a.Measured != want.Measured || a.Items[0].Value != want.Items[0].Value || a.Status != want.Status {
		t.Fatalf("got %q %s %q %+v, want %q", a.Error, a.Format, a.Measured, a.Items, want.Measured)
	}
	if !strings.Contains(strings.Join(a.Notes, "\n"), "had lost their \"#\"") {
		t.Errorf("notes %q", a.Notes)
	}
}

func TestOnlyNULs(t *testing.T) {
	a := Reader("nul", bytes.NewReader(make([]byte, 1<<20)), Options{})
	if a.Status != report.VerdictUnknown || !strings.Contains(a.Error, "only NUL bytes (1048576)") {
		t.Errorf("%s %q", a.Status, a.Error)
	}
}

// TestWrappedRows: a forum or a narrow terminal wraps long nccl-tests rows
// in two; each is read whole again. The sample is the real 2-node table of
// fixture 04 with its row broken after the out-of-place busbw.
func TestWrappedRows(t *testing.T) {
	clean := string(verbatim(t, "nccl-tests/04_all_gather_16G_2x_dgx-spark_GB10_new-header.txt"))
	var wrapped []string
	for _, l := range strings.Split(clean, "\n") {
		if f := strings.Fields(l); len(f) == 13 && f[2] == "float" {
			// break at the space after the out-of-place busbw, as a soft wrap does
			wrapped = append(wrapped, strings.Join(f[:8], "   "), strings.Join(f[8:], "   "))
			continue
		}
		wrapped = append(wrapped, l)
	}
	want := Reader("clean", strings.NewReader(clean), Options{})
	a := Reader("wrapped", strings.NewReader(strings.Join(wrapped, "\n")), Options{})
	if a.Error != "" || len(a.Data.NCCLTables) != 1 || len(a.Data.NCCLTables[0].Rows) != len(want.Data.NCCLTables[0].Rows) ||
		a.Items[0].Value != want.Items[0].Value || strings.Contains(strings.Join(a.Notes, "\n"), "could not be read") {
		t.Fatalf("%q %+v notes %q", a.Error, a.Items, a.Notes)
	}
	if !strings.Contains(strings.Join(a.Notes, "\n"), "1 table row read whole from two lines") {
		t.Errorf("notes %q", a.Notes)
	}
}

// TestCompactJSONNotSkipped: a JSON document on one long line (jq -c) is
// read whole, never skipped as an over-long line.
func TestCompactJSONNotSkipped(t *testing.T) {
	b := verbatim(t, "iperf3/01_iperf3-3.9_tcp_client_omit3.json")
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		t.Fatal(err)
	}
	pad := bytes.Repeat([]byte(" "), 70<<10) // past the 64 KiB sample
	in := append(append([]byte(nil), compact.Bytes()[:len(compact.Bytes())-1]...), pad...)
	in = append(in, '}')
	a := Reader("compact", bytes.NewReader(in), Options{})
	want := Reader("pretty", bytes.NewReader(b), Options{})
	if a.Error != "" || a.Format != FormatIperf3 || a.Items[0].Value != want.Items[0].Value {
		t.Errorf("%q %s %+v", a.Error, a.Format, a.Items)
	}
}

// normaliseLine hands on a line that starts with '#' (nccl-tests' headers
// and table heads) as it is, counting nothing: pasteReader.Next passes
// such lines on without the call. Property over any bytes after the '#',
// with the decorations normaliseLine strips elsewhere among them.
func TestHashLinesUnchanged(t *testing.T) {
	pieces := []string{"#", " ", "\t", "> ", "- ", "[1,0]<stdout>:", "0: ", "```", "~~~", "nThread ", "size ", "INFO ",
		"NET/IB", "Rank ", " device ", "busbw", "2026-03-13T22:26:02Z ", "(pid=1) ", "\x00", "\xff", "a", "9"}
	rng := rand.New(rand.NewPCG(36, 7))
	for range 50000 {
		line := []byte("#")
		for range rng.IntN(10) {
			line = append(line, pieces[rng.IntN(len(pieces))]...)
		}
		var st pasteStats
		if got := normaliseLine(line, &st); !bytes.Equal(got, line) || !reflect.DeepEqual(st, pasteStats{}) {
			t.Fatalf("%q: read as %q, %+v", line, got, st)
		}
	}
}
