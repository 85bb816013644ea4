package render

import (
	"fmt"
	"slices"
	"strings"
)

// Formats lists the --format values render draws, in the order help names
// them: the one list every command's --format comes from.
var Formats = []string{"text", "json", "markdown", "html", "prometheus"}

// TextAndJSON are the formats of a command whose text is its own (a table
// printed as it runs, a diff) and whose document is JSON: bench gpu, bench
// compare, fix, a bench dry run.
var TextAndJSON = []string{"text", "json"}

// CheckFormat returns the canonical name of a --format value (Write also
// takes "md" for markdown) if it is one of allowed, else an error naming
// the choices. allowed nil means all of Formats.
func CheckFormat(value string, allowed []string) (string, error) {
	if allowed == nil {
		allowed = Formats
	}
	if value == "md" && slices.Contains(allowed, "markdown") {
		value = "markdown"
	}
	if !slices.Contains(allowed, value) || !slices.Contains(Formats, value) {
		return "", fmt.Errorf("unknown --format %q (want one of %s)", value, strings.Join(allowed, ", "))
	}
	return value, nil
}

// FormatUsage is a --format flag's description for the allowed formats
// (nil: all of Formats).
func FormatUsage(allowed []string) string {
	if allowed == nil {
		allowed = Formats
	}
	return "output format: " + strings.Join(allowed, ", ")
}
