package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Flag values that refuse a bad value as it is parsed, so the error is
// Cobra's one usage line naming the command and the flag
// ("sparkrig: fix: invalid argument "7" for "--port" flag: want ...").

// durationFlag is a duration of at least min.
type durationFlag struct {
	p   *time.Duration
	min time.Duration
}

// durationVarMin registers a duration flag that refuses values below min.
func durationVarMin(fs *pflag.FlagSet, p *time.Duration, name string, def, min time.Duration, usage string) {
	*p = def
	fs.Var(&durationFlag{p: p, min: min}, name, usage)
}

func (d *durationFlag) String() string { return d.p.String() }
func (d *durationFlag) Type() string   { return "duration" }
func (d *durationFlag) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration such as 90s or 5m")
	}
	if v < d.min {
		return fmt.Errorf("want %s or more", d.min)
	}
	*d.p = v
	return nil
}

// intFlag is an integer in [lo, hi], or one of also (such as -1 for "pick
// it for me").
type intFlag struct {
	p      *int
	lo, hi int
	also   []int
	want   string
}

// intVarRange registers an integer flag that refuses values outside
// [lo, hi] other than also; want says what is accepted.
func intVarRange(fs *pflag.FlagSet, p *int, name string, def, lo, hi int, want, usage string, also ...int) {
	*p = def
	fs.Var(&intFlag{p: p, lo: lo, hi: hi, also: also, want: want}, name, usage)
}

func (f *intFlag) String() string { return strconv.Itoa(*f.p) }
func (f *intFlag) Type() string   { return "int" }
func (f *intFlag) Set(s string) error {
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || (v < f.lo || v > f.hi) && !slices.Contains(f.also, v) {
		return fmt.Errorf("want %s", f.want)
	}
	*f.p = v
	return nil
}

// choicesFlag is a comma-separated list (repeatable) whose every element
// is one of allowed, after canon maps a spelling to its name.
type choicesFlag struct {
	p       *[]string
	allowed []string
	canon   func(string) string
	set     bool
}

// choicesVar registers a list flag that refuses any element canon does
// not map into allowed.
func choicesVar(fs *pflag.FlagSet, p *[]string, name string, def, allowed []string, canon func(string) string, usage string) {
	*p = def
	fs.Var(&choicesFlag{p: p, allowed: allowed, canon: canon}, name, usage)
}

func (c *choicesFlag) String() string { return strings.Join(*c.p, ",") }
func (c *choicesFlag) Type() string   { return "strings" }
func (c *choicesFlag) Set(s string) error {
	var out []string
	for _, e := range strings.Split(s, ",") {
		name := c.canon(strings.TrimSpace(e))
		if !slices.Contains(c.allowed, name) {
			return fmt.Errorf("unknown %q (want %s)", strings.TrimSpace(e), strings.Join(c.allowed, ", "))
		}
		out = append(out, name)
	}
	if !c.set {
		*c.p, c.set = nil, true
	}
	*c.p = append(*c.p, out...)
	return nil
}
