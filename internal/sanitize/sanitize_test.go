package sanitize

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTextShowsControlCharacters(t *testing.T) {
	in := "NCCL WARN \x1b]52;c;cm0gLXJmIH4K\a\x1b[2J done\r\nnext\tline \u009b"
	want := `NCCL WARN \x1b]52;c;cm0gLXJmIH4K\x07\x1b[2J done\x0d` + "\nnext\tline " + `\x9b`
	if got := Text(in); got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
}

// The cases of a hostile audit: a private-use character that used to be
// decoded to ESC, bidi overrides and isolates, separators, the BOM, invalid
// UTF-8 and private-use characters past the BMP.
func TestTextNeverDecodes(t *testing.T) {
	for in, want := range map[string]string{
		"\uE01B[2J\uE01B[32mALL GOOD":  `\ue01b[2J\ue01b[32mALL GOOD`,
		"spark\u202e10-krags":          `spark\u202e10-krags`,
		"a\u2066b\u2069c\u200fd\u061c": `a\u2066b\u2069c\u200fd\u061c`,
		"x\u2028y\u2029z\ufeff":        `x\u2028y\u2029z\ufeff`,
		"bad \xff\xfe utf-8":           "bad \uFFFD\uFFFD utf-8",
		"plane 16 \U0010fffd":          `plane 16 \U0010fffd`,
		"plane 15 \U000f0000":          `plane 15 \U000f0000`,
		"1× NVIDIA GB10 ⚠️ ✅ é 中文":     "1× NVIDIA GB10 ⚠️ ✅ é 中文",
		Mark + "[31mred":               `\ue01b` + escapedKey() + "[31mred",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

// escapedKey is how Text shows the process's marker key.
func escapedKey() string {
	out := ""
	for _, r := range Mark[len("\uE01B"):] {
		out += `\u` + hex4(r)
	}
	return out
}

func hex4(r rune) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[r>>12&15], digits[r>>8&15], digits[r>>4&15], digits[r&15]})
}

func TestLineKeepsOneLine(t *testing.T) {
	if got, want := Line("spark-01\n\tx\r"), `spark-01\x0a\x09x\x0d`; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
}

// Only a Writer makes colour, and only from sparkrig's own markers.
func TestWriterTurnsOnlyMarkersIntoEscapes(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	if NewWriter(w) != w {
		t.Error("a Writer was wrapped twice")
	}
	w.Write([]byte(Colour("32") + "ok" + Colour("0") + " \uE01B[32mALL GOOD \x1b[2J\n"))
	if got, want := b.String(), "\x1b[32mok\x1b[0m \\ue01b[32mALL GOOD \\x1b[2J\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

func TestMarkdown(t *testing.T) {
	for in, want := range map[string]string{
		"<!-- hide":                      `\<\!-- hide`,
		"[x](http://e) ![i](http://e/i)": `\[x\](http://e) \!\[i\](http://e/i)`,
		"<img src=x>&amp;":               `\<img src=x\>\&amp;`,
		"a\nb":                           `a\\x0ab`,
		"`code` *em* _em_ ~~s~~ | #":     "\\`code\\` \\*em\\* _em_ \\~\\~s\\~\\~ \\| \\#",
		"enp1s0f1np1":                    "enp1s0f1np1",
	} {
		if got := Markdown(in); got != want {
			t.Errorf("Markdown(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLabelValue(t *testing.T) {
	in := "spark\x1b[31m\a\r\n\"q\" \\ \u202e"
	want := `spark\\x1b[31m\\x07\\x0d\n\"q\" \\ \\u202e`
	if got := LabelValue(in); got != want {
		t.Errorf("LabelValue = %q, want %q", got, want)
	}
}

// FuzzSanitize: whatever the input, no output holds a character a terminal
// or viewer would act on, Line's holds no line break, Markdown's no
// unescaped '<', and a Writer's no ESC but from markers.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{
		"NCCL WARN \x1b]52;c;cm0gLXJmIH4K\a\x1b[2J done\r\n",
		"\uE01B[2J\uE01B[32mALL GOOD\uE01B[0m",
		"spark\u202e10\u2066x\u2069", "<!--\n| fail |", "[x](http://e) ![i](i.png) <img src=x>",
		"bad \xff\xfe", "\U0010fffd\U000f0000\ufeff\u2028", Mark + "[31m", "ID=ubuntu\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, out := range map[string]string{"Text": Text(s), "Line": Line(s), "Markdown": Markdown(s), "LabelValue": LabelValue(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("%s(%q) is not UTF-8: %q", name, s, out)
			}
			for _, r := range out {
				if Unsafe(r) {
					t.Fatalf("%s(%q) holds %U: %q", name, s, r, out)
				}
				if (name == "Line" || name == "Markdown" || name == "LabelValue") && (r == '\n' || r == '\r') {
					t.Fatalf("%s(%q) breaks a line: %q", name, s, out)
				}
			}
		}
		md := Markdown(s)
		for i := 0; i < len(md); i++ {
			if strings.IndexByte(mdSpecial, md[i]) >= 0 {
				if md[i] != '\\' || i+1 >= len(md) || strings.IndexByte(mdSpecial, md[i+1]) < 0 {
					t.Fatalf("Markdown(%q) = %q: %q at %d is not escaped", s, md, md[i], i)
				}
				i++
			}
		}
		var b bytes.Buffer
		NewWriter(&b).Write([]byte(s))
		if strings.ContainsRune(b.String(), 0x1b) && !strings.Contains(s, Mark) {
			t.Fatalf("a Writer made ESC from %q: %q", s, b.String())
		}
	})
}

// JSON escapes what encoding/json leaves raw, and the document decodes to
// the same strings.
func TestJSONEscapesWhatATerminalActsOn(t *testing.T) {
	in := map[string]string{"host": "node\x1b[31m-1\x7f\u009b2J\u202egpj.exe\u200b\U000f0001 ok é 漢"}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out := JSON(b)
	for _, raw := range []string{"\x1b", "\x7f", "\u009b", "\u202e", "\u200b", "\U000f0001"} {
		if strings.Contains(string(out), raw) {
			t.Errorf("%q left raw in %s", raw, out)
		}
	}
	if want := `{"host":"node\u001b[31m-1\u007f\u009b2J\u202egpj.exe\u200b\udb80\udc01 ok é 漢"}`; string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil || back["host"] != in["host"] {
		t.Errorf("decodes to %q (%v), want %q", back["host"], err, in["host"])
	}
	if plain := []byte(`{"a":"b"}`); &JSON(plain)[0] != &plain[0] {
		t.Error("an ASCII document was copied")
	}
}
