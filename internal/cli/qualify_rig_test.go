package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// rigText is a report as qualify writes it for a terminal.
func rigText(rep *report.Report) string {
	var text bytes.Buffer
	writeRendered(&Env{Stdout: &text, Getenv: func(string) string { return "" }}, "", "text", rep)
	return text.String()
}

// TestRigAllPairsOneOfThreeBad: three hosts on one switch at 200 Mbit/s,
// node-3's port at 20 Mbit/s both ways. Four of the six directions touch
// node-3, so the median of all directions is node-3's rate and judged
// against it every direction passed. Against what the best pair shows
// (node-1 ↔ node-2) qualify names node-3 alone, confirmed against a
// known-good partner.
func TestRigAllPairsOneOfThreeBad(t *testing.T) {
	r, sw := switchRig(t, 3, "200mbit")
	shape(t, r, sw, "node-3", "both", "20mbit")
	code, rep, errOut := rigQualify(t, r, "--test-time", "2s", "--subnet", "10.77.0.0/24")
	text := rigText(rep)
	t.Logf("exit %d: %s\n%s", code, strings.TrimSpace(errOut), text)
	wantNamed(t, rep, code, []string{"fail allpairs.node node-3 port", "node node-3 confirmed"})
	if rep.AllPairs.RefName != "best pairs" || rep.AllPairs.Reference < 0.1 {
		t.Errorf("reference %s %v Gb/s, want the best pairs' (about 0.19)", rep.AllPairs.RefName, rep.AllPairs.Reference)
	}
	if strings.Contains(text, "no suspect") {
		t.Errorf("an all-clear over a bad node:\n%s", text)
	}
}

// TestRigAllPairsTwoOfFourBad: four hosts, node-3 and node-4 at 20 Mbit/s:
// ten of the twelve directions touch a slow node and the median is the
// slow rate. qualify names both, each confirmed against a different
// known-good partner, and neither good node.
func TestRigAllPairsTwoOfFourBad(t *testing.T) {
	r, sw := switchRig(t, 4, "200mbit")
	shape(t, r, sw, "node-3", "both", "20mbit")
	shape(t, r, sw, "node-4", "both", "20mbit")
	code, rep, errOut := rigQualify(t, r, "--test-time", "2s", "--subnet", "10.77.0.0/24")
	t.Logf("exit %d: %s\n%s", code, strings.TrimSpace(errOut), rigText(rep))
	wantNamed(t, rep, code, []string{
		"fail allpairs.node node-3 port", "fail allpairs.node node-4 port",
		"node node-3 confirmed", "node node-4 confirmed",
	})
}

// TestRigAllPairsOneDeadFromTheStart: four hosts, node-4's links down
// before the run (powered off). qualify names node-4 as not reached, and
// measures every pair of the other three, which pass.
func TestRigAllPairsOneDeadFromTheStart(t *testing.T) {
	r, _ := switchRig(t, 4, "200mbit")
	for _, dev := range []string{"enp1s0f1np1", "enP7s7"} {
		if out, err := r.Host("node-4").Exec(context.Background(), "ip", "link", "set", dev, "down"); err != nil {
			t.Fatalf("%v %s", err, out)
		}
	}
	code, rep, errOut := rigQualify(t, r, "--test-time", "2s", "--subnet", "10.77.0.0/24")
	text := rigText(rep)
	t.Logf("exit %d: %s\n%s", code, strings.TrimSpace(errOut), text)
	wantNamed(t, rep, code, []string{"fail allpairs.unreachable node-4 node"})
	ap := rep.AllPairs
	if strings.Join(ap.Nodes, ",") != "node-1,node-2,node-3" || ap.Rounds != 3 {
		t.Fatalf("nodes %v, %d rounds", ap.Nodes, ap.Rounds)
	}
	for i, row := range ap.Matrix {
		for j, v := range row {
			if i != j && v <= 0 {
				t.Errorf("%s→%s not measured: %v", ap.Nodes[i], ap.Nodes[j], v)
			}
		}
	}
	if !strings.Contains(text, "not judged: node-4 could not be reached: its pairs were not measured") || strings.Contains(text, "no suspect") {
		t.Errorf("text:\n%s", text)
	}
	if !strings.Contains(errOut, "qualify: node-4 could not be reached, its pairs are left out") {
		t.Errorf("stderr: %s", errOut)
	}
}
