# warns.awk: prints "ver TAB file TAB line TAB format" for each WARN( call in
# one source file. A call may span lines: text is gathered from the line with
# WARN( until the parentheses of the call close, outside string literals.
function flush(   i, c, n, depth, out, inlit, esc, word, sawlit, done) {
	n = length(stmt)
	depth = 0; out = ""; inlit = 0; esc = 0; word = ""; sawlit = 0; done = 0
	for (i = 1; i <= n && !done; i++) {
		c = substr(stmt, i, 1)
		if (inlit) {
			if (esc) { out = out c; esc = 0; continue }
			if (c == "\\") { out = out c; esc = 1; continue }
			if (c == "\"") { inlit = 0; continue }
			out = out c
			continue
		}
		if (c == "\"") { if (word != "") { out = out "%?"; word = "" } inlit = 1; sawlit = 1; continue }
		if (c == "(") { depth++; word = ""; continue }
		if (c == ")") { depth--; if (depth <= 0) done = 1; continue }
		if (c == "," && depth == 1) { done = 1; continue }
		if (c ~ /[A-Za-z0-9_]/) { word = word c; continue }
		if (word != "" && sawlit) { out = out "%?" }
		word = ""
	}
	if (sawlit && out != "") {
		gsub(/\t/, "\\t", out)
		print ver "\t" file "\t" start "\t" out
	}
	stmt = ""; collecting = 0
}
# balance: depth of parentheses outside literals and comments after text s
function balance(s,   i, c, n, d, inlit, esc) {
	n = length(s); d = 0; inlit = 0; esc = 0
	for (i = 1; i <= n; i++) {
		c = substr(s, i, 1)
		if (inlit) {
			if (esc) { esc = 0; continue }
			if (c == "\\") { esc = 1; continue }
			if (c == "\"") inlit = 0
			continue
		}
		if (c == "\"") { inlit = 1; continue }
		if (c == "/" && substr(s, i + 1, 1) == "/") break
		if (c == "(") d++
		if (c == ")") d--
	}
	return d
}
{
	line = $0
	if (!collecting) {
		# WARN( not part of a longer name (NOWARN, INFO_WARN, ...) and not a definition
		p = match(line, /(^|[^A-Za-z0-9_])WARN[ \t]*\(/)
		if (p == 0 || line ~ /#[ \t]*define[ \t]+WARN/) next
		if (substr(line, RSTART, 1) != "W") { RSTART++ }
		stmt = "WARN" substr(line, RSTART + 4)
		start = NR
		collecting = 1
		if (balance(stmt) <= 0) flush()
		next
	}
	stmt = stmt " " line
	if (balance(stmt) <= 0 || NR - start > 12) flush()
}
END { if (collecting) flush() }
