package render

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMDTable(t *testing.T) {
	var buf bytes.Buffer
	err := mdTable(&buf, []string{"host", "check", "+busbw GB/s"}, [][]string{
		{"spark-bd26", "a|b", "20.95"},
		{"spark-3995", "two\nlines"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "| host | check | busbw GB/s |\n|---|---|--:|\n" +
		"| spark-bd26 | a\\|b | 20.95 |\n| spark-3995 | two<br>lines |  |\n\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestMDDetails(t *testing.T) {
	var buf bytes.Buffer
	raw := "# Out of bounds values : 0 OK\n```\n"
	if err := mdDetails(&buf, "all_gather <16G>", "text", raw); err != nil {
		t.Fatal(err)
	}
	want := "<details><summary>all_gather &lt;16G&gt;</summary>\n\n````text\n# Out of bounds values : 0 OK\n```\n````\n\n</details>\n\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestMDCode(t *testing.T) {
	for in, want := range map[string]string{"NCCL_IB_HCA": "`NCCL_IB_HCA`", "a`b": "``a`b``", "`x": "`` `x ``", "": ""} {
		if got := mdCode(in); got != want {
			t.Errorf("mdCode(%q) = %q, want %q", in, got, want)
		}
	}
}
