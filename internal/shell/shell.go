// Package shell quotes words for POSIX sh, for the command lines and scripts
// sparkrig sends to nodes.
package shell

import "strings"

// Quote returns s as one single-quoted sh word, whatever it contains.
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// QuoteIfNeeded leaves words made only of characters sh treats literally as
// they are, for readable command lines, and quotes the rest.
func QuoteIfNeeded(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r))
	}) < 0 {
		return s
	}
	return Quote(s)
}
