package analyze

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// An error's line number is its line in the input, whatever the lines
// around it: the NCCL parser hands the catalogue only some lines, and a
// paste's fences and blank lines are never handed on. Every field case is
// read with fences and blank lines put in at random places; each error's
// line must hold the line it quotes.
func TestErrorLineIsInputLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 7))
	checked := 0
	for _, dir := range []string{"testdata/field/train", "testdata/field-cases"} {
		for _, c := range readFieldCases(t, dir) {
			var in []byte
			for _, l := range bytes.SplitAfter(c.text, []byte("\n")) {
				switch rng.IntN(8) {
				case 0:
					in = append(in, "```\n"...)
				case 1:
					in = append(in, '\n')
				}
				in = append(in, l...)
			}
			p, err := Parse(bytes.NewReader(in), "")
			if err != nil {
				continue
			}
			lines := bytes.Split(in, []byte("\n"))
			for _, h := range p.Errors {
				if h.Line < 1 || h.Line > len(lines) {
					t.Errorf("%s: %s at line %d of %d", c.name, h.Signature.ID, h.Line, len(lines))
					continue
				}
				first := []byte(h.First)
				tail := first[max(0, len(first)-20):]
				if !bytes.Contains(lines[h.Line-1], tail) {
					t.Errorf("%s: %s at line %d %q, which does not hold %q", c.name, h.Signature.ID, h.Line, lines[h.Line-1], tail)
				}
				checked++
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d error lines checked", checked)
	}
}
