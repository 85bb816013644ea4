package results

import (
	"bytes"
	"strings"
	"testing"
)

// procKey reads the "host:pid" of the openings NCCL prints, whatever
// stands before them, and nothing from others.
func TestProcKey(t *testing.T) {
	for in, want := range map[string]string{
		"ault44:1424218:1424218 [0] ":                      "ault44:1424218",
		"node-0:5109:5177 [7] ":                            "node-0:5109",
		"[2025-06-12 16:57:52] gpu0301:842624:842643 [0] ": "gpu0301:842624",
		"mtk:2521:2528 [0] ":                               "mtk:2521",
		"gpu0301: ":                                        "",
		"host:pid:tid [0] ":                                "",
		"":                                                 "",
	} {
		if got := string(procKey([]byte(in))); got != want {
			t.Errorf("procKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// Each process's "set by environment" lines and its "Init COMPLETE" are
// kept apart (field case 05's formats, NVIDIA/nccl#1516), and the job's
// Env keeps the last value as before.
func TestProcEnv(t *testing.T) {
	log := strings.Join([]string{
		"ault44:1424218:1424218 [0] NCCL INFO NCCL_MIN_NCHANNELS set by environment to 2.",
		"ault43:1696338:1696338 [0] NCCL INFO NCCL_MIN_NCHANNELS set by environment to 4.",
		"ault43:1696338:1696338 [0] NCCL INFO NCCL_IB_HCA set to mlx5_0",
		"ault44:1424218:1424301 [0] NCCL INFO comm 0x5566 rank 2 nranks 4 cudaDev 0 busId 41000 commId 0x1c1a - Init COMPLETE",
		"",
	}, "\n")
	o, err := ParseNCCLTests(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	pe := o.Log.ProcEnv
	if len(pe) != 2 || pe[0].Proc != "ault44:1424218" || pe[0].Host != "ault44" || pe[0].Env["NCCL_MIN_NCHANNELS"] != "2" || !pe[0].Init ||
		pe[1].Proc != "ault43:1696338" || pe[1].Env["NCCL_MIN_NCHANNELS"] != "4" || pe[1].Env["NCCL_IB_HCA"] != "mlx5_0" || pe[1].Init {
		t.Fatalf("ProcEnv %+v", pe)
	}
	if o.Log.Env["NCCL_MIN_NCHANNELS"] != "4" {
		t.Fatalf("Env %v", o.Log.Env)
	}
}

// Property: procKey is procKeyOf the opening's bytes.Fields, for every
// prefix and suffix of every real line (any opening cut anywhere) and of
// openings with other blanks, brackets and non-ASCII spaces.
func TestProcKeyIsFieldsRead(t *testing.T) {
	lines := realLines(t)
	lines = append(lines, []byte("h:1:2 [0]"), []byte("[0]"), []byte("[a] [b] "), []byte("\vh:1:2\f[3]\r"),
		[]byte("h:1:2\u00a0[0] "), []byte("\u0085x:12:3 [1] "), []byte("h:12:3 \xff[0] "))
	for _, line := range lines {
		for i := range len(line) + 1 {
			for _, s := range [][]byte{line[:i], line[i:]} {
				if got, want := procKey(s), procKeyOf(bytes.Fields(s)); !bytes.Equal(got, want) || (got == nil) != (want == nil) {
					t.Fatalf("procKey(%q) = %q; its fields say %q", s, got, want)
				}
			}
		}
	}
}
