package expect

import (
	"slices"
	"strings"
	"testing"
)

func TestSignatures(t *testing.T) {
	sigs, err := Signatures()
	if err != nil {
		t.Fatal(err)
	}
	if len(sigs) < 15 {
		t.Fatalf("%d signatures", len(sigs))
	}
	for _, s := range sigs {
		for _, src := range s.Sources {
			if !strings.HasPrefix(src, "https://github.com/") && !strings.HasPrefix(src, "NVIDIA/nccl docs/") && !strings.HasPrefix(src, "NVIDIA/nccl src/") && !strings.HasPrefix(src, "docs/") {
				t.Errorf("%s: source %q is neither a thread, NCCL's documentation or source, nor the project's docs", s.ID, src)
			}
		}
		// the literal prefilter must never hide a match: each pattern's
		// literal is in the text its own first example would need
		for i, lit := range s.Lits {
			if len(lit) > 0 && !strings.Contains(s.Match[i], string(lit)) {
				t.Errorf("%s: literal %q not in %q", s.ID, lit, s.Match[i])
			}
			// one pattern without a literal turns the matcher's literal
			// pass off for every line (diagnose's candidate test)
			if len(lit) == 0 {
				t.Errorf("%s: pattern %q has no required literal of 4 or more plain characters", s.ID, s.Match[i])
			}
		}
	}
}

func TestRequiredLiteral(t *testing.T) {
	for pattern, want := range map[string]string{
		`ibv_modify_qp failed with (error )?(110|Connection timed out)`: "ibv_modify_qp failed with ",
		`Got completion from peer .*with (status=|error )12\b`:          "Got completion from peer ",
		`Failed to query GID .*No data available`:                       "Failed to query GID ",
		`ncclSystemError`:       "ncclSystemError",
		`a|b`:                   "",
		`Cuda failure( \d+)? '`: "Cuda failure",
		`ran for \d+ milliseconds before timing out`: " milliseconds before timing out",
		`Couldn.t connect to .*:\d+`:                 "t connect to ",
		// a class or an escape inside a group holds no syntax
		`(?:^|[/(=])lib\w*: undefined symbol: `: ": undefined symbol: ",
		`(?:[)]x|y)abcd`:                        "abcd",
		`(a|[^\]|(])wxyz`:                       "wxyz",
		`(status=[^(]*\(12\)|error 12)Got it`:   "Got it",
		`Failed status-[^(]*\(12\):`:            "Failed status-",
		// a repeat count is syntax
		`GID ::ffff:169\.254\.[0-9]{1,3}\.[0-9]{1,3}`: "GID ::ffff:169",
		`x{0,64}not found`:                            "not found",
	} {
		if got := requiredLiteral(pattern); got != want {
			t.Errorf("%q: %q, want %q", pattern, got, want)
		}
	}
	// every literal of a repeat is text of the pattern outside its counts
	for pattern, want := range map[string][]string{
		`(local|remote) GID ::ffff:169\.254\.[0-9]{1,3}\.[0-9]{1,3}`: {" GID ::ffff:169", "254"},
		`network [^ ]{0,64}not found`:                                {"network ", "not found"},
	} {
		if got := requiredLiterals(pattern); !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", pattern, got, want)
		}
	}
}

func TestParseSignaturesRejects(t *testing.T) {
	for _, doc := range []string{
		"signatures:\n  - id: x\n    title: t\n    match: ['(']\n    weight: 1\n    severity: fail\n    meaning_spark: a\n    meaning_server: b\n    fix: c\n    sources: [s]\n",
		"signatures:\n  - id: x\n    title: t\n    match: [a]\n    weight: 1\n    severity: fail\n    meaning_spark: a\n    meaning_server: b\n    fix: c\n",
		"signatures:\n  - id: x\n    title: t\n    match: [a]\n    weight: 0\n    severity: fail\n    meaning_spark: a\n    meaning_server: b\n    fix: c\n    sources: [s]\n",
		// a fixing release without what it changed, or not a release
		"signatures:\n  - id: x\n    title: t\n    match: [a]\n    weight: 1\n    severity: fail\n    meaning_spark: a\n    meaning_server: b\n    fix: c\n    sources: [s]\n    fixed_in: 2.15.1\n",
		"signatures:\n  - id: x\n    title: t\n    match: [a]\n    weight: 1\n    severity: fail\n    meaning_spark: a\n    meaning_server: b\n    fix: c\n    sources: [s]\n    fixed_by: d\n",
		"signatures:\n  - id: x\n    title: t\n    match: [a]\n    weight: 1\n    severity: fail\n    meaning_spark: a\n    meaning_server: b\n    fix: c\n    sources: [s]\n    fixed_in: v2.15\n    fixed_by: d\n",
	} {
		if _, err := ParseSignatures([]byte(doc)); err == nil {
			t.Errorf("accepted %q", doc)
		}
	}
}
