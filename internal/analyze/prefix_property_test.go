package analyze

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// realPrefixes are what launchers, log collectors and terminals put in
// front of every line of a job's output.
var realPrefixes = []string{
	"[1,0]<stdout>:",                        // mpirun --tag-output
	"[rank3]: ",                             // torchrun
	"2024-05-01T12:00:00.123Z ",             // kubectl logs --timestamps
	"pod-xyz | ",                            // docker compose, stern
	"0: ",                                   // srun --label
	"[2024-05-01 12:00:00] ",                // a timestamping pipe
	"spark-02: ",                            // pdsh
	"trainer-7f9c6  | ",                     // docker compose's padded service name
	"Nov 25 14:12:12 spark python3[4242]: ", // journalctl
}

// randomPrefix is a tag of letters, digits and punctuation a tool might
// print (no NCCL field shape, no table row), and a separator.
func randomPrefix(r *rand.Rand) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	const rest = letters + "0123456789-_."
	n := 1 + r.Intn(14)
	b := []byte{letters[r.Intn(len(letters))]}
	for range n {
		b = append(b, rest[r.Intn(len(rest))])
	}
	seps := []string{": ", " | ", "| ", " ", "  | ", ":"}
	return string(b) + seps[r.Intn(len(seps))]
}

// summary is what an analysis concludes: the format read, the verdict,
// what was measured and judged, the hosts and the flags raised.
func summary(a report.AnalysisResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "format=%s status=%s platform=%s topology=%s error=%q\n", a.Format, a.Status, a.Platform, a.Topology, a.Error)
	for _, it := range a.Items {
		fmt.Fprintf(&b, "item %s %s %.4g %s %s", it.Subject, it.Metric, it.Value, it.Unit, it.Verdict)
		for _, c := range it.Causes {
			fmt.Fprintf(&b, " %s/%s", c.ID, c.Likelihood)
		}
		b.WriteByte('\n')
	}
	var flags []string
	for _, f := range a.Flags {
		flags = append(flags, f.ID+"/"+string(f.Severity))
	}
	fmt.Fprintf(&b, "flags %s\n", strings.Join(flags, " "))
	if l := a.Data.NCCLLog; l != nil {
		hosts := slices.Clone(l.Hosts)
		slices.Sort(hosts)
		fmt.Fprintf(&b, "hosts %s version %s info %d warn %d\n", strings.Join(hosts, ","), l.Version, l.InfoLines, l.WarnCount)
	}
	return b.String()
}

// Any prefix, real or random, in front of every line of every text fixture
// gives the same analysis as the fixture alone.
func TestAnyPrefixSameAnalysis(t *testing.T) {
	files, err := filepath.Glob("testdata/*/*")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(36))
	for _, f := range files {
		if strings.HasSuffix(f, ".SOURCE") || strings.HasSuffix(f, ".json") {
			continue // a JSON document is not read line by line
		}
		name, _ := filepath.Rel("testdata", f)
		if st, err := os.Stat(f); err != nil || st.IsDir() {
			continue
		}
		clean := verbatim(t, name)
		if t := bytes.TrimSpace(clean); len(t) > 0 && (t[0] == '{' || t[0] == '[') && jsonDocument(t) {
			continue
		}
		want := summary(Reader(name, bytes.NewReader(clean), Options{}))
		prefixes := slices.Clone(realPrefixes)
		for range 8 {
			prefixes = append(prefixes, randomPrefix(r))
		}
		// a tag no launcher is known by (compose's, pdsh's, a random word)
		// is told from its repeating on every line: a paste of fewer than
		// 4 lines cannot show it
		lines := 0
		for _, l := range strings.Split(string(clean), "\n") {
			if strings.TrimSpace(l) != "" {
				lines++
			}
		}
		for _, p := range prefixes {
			if lines < 4 && !knownTag(p) {
				continue
			}
			got := summary(Reader(name, strings.NewReader(prefixLines(string(clean), p)), Options{}))
			if got != want {
				t.Errorf("%s with %q before every line:\n got %s\nwant %s", name, p, got, want)
			}
		}
	}
}

// A paste is JSON only when it parses as JSON (or is cut while it still
// does): a first "[" of a tag, a timestamp or a rank is text.
func TestJSONOnlyWhenItParses(t *testing.T) {
	for _, c := range []struct {
		in   string
		json bool
	}{
		{`[1,0]<stdout>:host:1:1 [0] NCCL INFO Bootstrap : Using eth0`, false},
		{"[2026-03-13 22:26:02] host-01.example.com:XXXXXX [5] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed", false},
		{"[rank3]: torch.distributed.DistBackendError: NCCL error", false},
		{"[0] [1] two tags", false},
		{`[{"a": 1}, {"b": [2, 3`, true}, // cut by the sample's end
		{`{"start": {"connected": []}, "intervals": []}`, true},
		{"{\"a\": 1}\n{\"b\": 2}\n", true}, // JSON lines
		{`[1, 2, 3]`, true},
	} {
		if got := jsonDocument([]byte(c.in)); got != c.json {
			t.Errorf("jsonDocument(%q) = %v", c.in, got)
		}
	}
	// pasted/01's WARN line, as a paste that starts with its timestamp
	in := "[2026-03-13 22:26:02] host-01.example.com:XXXXXX [5] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx_x:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:xxx.xx.xx.xx, remote GID ::ffff:xxx.xx.xxx.xx\n"
	a := Reader("paste", strings.NewReader(in), Options{})
	if a.Error != "" || a.Status != report.VerdictCritical || len(a.Flags) == 0 || a.Flags[0].ID != "error.ib-qp-timeout" {
		t.Errorf("got %s %q %+v", a.Status, a.Error, a.Flags)
	}
}

// knownTag: a prefix analyze knows by its shape, whatever the line count.
func knownTag(p string) bool {
	for _, k := range []string{"[1,0]<stdout>:", "[rank3]: ", "2024-05-01T12:00:00.123Z ", "0: ", "[2024-05-01 12:00:00] ", "Nov 25 14:12:12 spark python3[4242]: "} {
		if p == k {
			return true
		}
	}
	return false
}
