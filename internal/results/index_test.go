package results

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"
)

// index finds a key where bytes.Index does, for the handlers' keys and
// random ones, in messages built from pieces of both: the key itself,
// cut keys, blanks, letters of either case, digits and signs.
func TestIndexIsBytesIndex(t *testing.T) {
	keys := []string{" via ", " nRanks ", " nranks ", " nNodes ", " localRanks ", " commId 0x", " GDR ", " speed=",
		" Dev ", " mtu ", " GID ", "; OOB ", " set by environment to ", " set to ", "Using ", "[receive]", " -> ",
		" coll channels", "] ", " comm 0x", " busId ", " rank ", " ", "a", "aa", "  ", "R"}
	parts := []string{" ", "  ", "n", "R", "ranks", "Ranks", "0", "x", "=", ";", "[", "]", "via", "GDR", "-", ">", "\t"}
	rng := rand.New(rand.NewPCG(36, 5))
	for range 200000 {
		key := keys[rng.IntN(len(keys))]
		if rng.IntN(4) == 0 {
			key = ""
			for range 1 + rng.IntN(4) {
				key += parts[rng.IntN(len(parts))]
			}
		}
		var s []byte
		for range rng.IntN(12) {
			switch rng.IntN(3) {
			case 0:
				s = append(s, key...)
			case 1:
				s = append(s, key[:rng.IntN(len(key)+1)]...)
			default:
				s = append(s, parts[rng.IntN(len(parts))]...)
			}
		}
		if got, want := index(s, key), bytes.Index(s, []byte(key)); got != want {
			t.Fatalf("index(%q, %q) = %d, bytes.Index says %d", s, key, got, want)
		}
	}
}

// An INFO message whose first two bytes b0 b1 have infoClass[b0]&
// infoPair[b1] == 0 changes nothing in info (the quiet-line reader passes
// it over without a call): every real one, with its first or its second
// byte replaced by every byte, and every tenth with its first two
// replaced by every pair that starts with a byte of infoHeads or a digit.
func TestInfoHeadsCoverInfo(t *testing.T) {
	seen := map[string]bool{}
	var msgs [][]byte
	for _, line := range realLines(t) {
		if i := bytes.Index(line, tagInfo); i >= 0 {
			m := bytes.TrimRight(line[i+len(tagInfo):], "\r\n")
			if !seen[string(m)] {
				seen[string(m)] = true
				msgs = append(msgs, m)
			}
		}
	}
	if len(msgs) < 100 {
		t.Fatalf("%d INFO messages in the real logs", len(msgs))
	}
	passed, read := 0, 0
	try := func(msg []byte) {
		if len(msg) >= 2 && infoClass[msg[0]]&infoPair[msg[1]] != 0 {
			read++
			return
		}
		var l NCCLLog
		l.lastHost = []byte("spark-1")
		l.info(msg)
		if want := (NCCLLog{lastHost: []byte("spark-1")}); !reflect.DeepEqual(l, want) {
			t.Fatalf("info(%q) changed the log", msg)
		}
		passed++
	}
	for k, m := range msgs {
		try(m)
		if len(m) < 2 {
			continue
		}
		for c := range 256 {
			try(append([]byte{byte(c)}, m[1:]...))
			try(append([]byte{m[0], byte(c)}, m[2:]...))
		}
		// every pair, on every tenth message's rest
		for c := range 256 {
			if k%10 != 0 || infoClass[c]&^classAlarm == 0 {
				continue
			}
			for d := range 256 {
				try(append([]byte{byte(c), byte(d)}, m[2:]...))
			}
		}
	}
	if read == 0 {
		t.Fatal("no message is read")
	}
	t.Logf("%d messages passed over, %d read", passed, read)
}

// commFields reads each key where intAfter and index do, on messages
// built from the keys, cut keys, blanks, digits, letters and '!' (a
// blank's byte plus one, the word search's edge case), of every length.
func TestCommFieldsIsIntAfter(t *testing.T) {
	keys := []string{" nRanks ", " nranks ", " nNodes ", " localRanks ", " commId 0x"}
	parts := []string{" ", "  ", "0", "12", "x", "n", "Ranks", "ranks", "0x", "!", "\x00", "\xff", "-", "\t", "comm"}
	rng := rand.New(rand.NewPCG(36, 8))
	for range 100000 {
		var msg []byte
		for range rng.IntN(20) {
			if rng.IntN(3) == 0 {
				k := keys[rng.IntN(len(keys))]
				msg = append(msg, k[:rng.IntN(len(k)+1)]...)
			} else {
				msg = append(msg, parts[rng.IntN(len(parts))]...)
			}
		}
		var f commFields
		f.read(msg)
		for k, got := range []keyInt{f.nRanks, f.nranks, f.nNodes, f.localRanks} {
			n, ok := intAfter(msg, keys[k])
			if got.seen != (index(msg, keys[k]) >= 0) || got.ok != ok || got.n != n {
				t.Fatalf("%q in %q: %+v; intAfter says %d %v", keys[k], msg, got, n, ok)
			}
		}
		if f.commID != (index(msg, keys[4]) >= 0) {
			t.Fatalf("%q in %q: %v", keys[4], msg, f.commID)
		}
	}
}

// An opening matches a line exactly when the line starts with it: any
// length ownTag can keep (15 to maxOpening bytes), lines equal to it,
// longer, shorter, or different in any one byte.
func TestOpeningMatchIsHasPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 9))
	var o opening
	for range 200000 {
		b := make([]byte, 15+rng.IntN(maxOpening-14))
		for i := range b {
			b[i] = byte('0' + rng.IntN(3))
		}
		o = opening{b: b}
		o.words()
		line := append(append([]byte{}, b...), "INFO x"...)
		switch rng.IntN(4) {
		case 0:
			line[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
		case 1:
			line = line[:rng.IntN(len(line)+1)]
		case 2:
			line[rng.IntN(len(line))] = byte('0' + rng.IntN(3))
		}
		if got, want := o.match(line), bytes.HasPrefix(line, b); got != want {
			t.Fatalf("opening %q (%d bytes), line %q: match %v, HasPrefix %v", b, len(b), line, got, want)
		}
	}
	if (&opening{}).match([]byte("spark-1:1:1 [0] NCCL INFO x")) {
		t.Fatal("an opening never kept matches a line")
	}
}
