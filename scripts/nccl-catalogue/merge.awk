# merge.awk: rows "ver TAB file TAB line TAB format" → one row per (file,
# format) with its class, newest line, first and last version and the list.
function vkey(v,   a) { split(v, a, "."); return sprintf("%03d%03d%03d", a[1], a[2], a[3]) }
function class(file, msg) {
	# src/os/ (2.30 and later) holds the code of several classes: its messages are told by their text
	if (file ~ /^src\/os\//) file = ""
	if (file ~ /net_ib|ibvwrap|ibvsymbols|ibvcore|mlx5|\/gin\//) return "net-ib"
	if (msg ~ /^NET\/IB|^NET\/GIN|ibv_/) return "net-ib"
	if (file ~ /socket|bootstrap|\/ras\// || msg ~ /^NET\/Socket|^Bootstrap|^bootstrap|[Ss]ocket/) return "socket-bootstrap"
	if (file ~ /gdrwrap/) return "cuda"
	if (msg ~ /^Call to/) return "resource"
	if (file ~ /proxy/) return "proxy"
	if (msg ~ /[Cc]uda|CUDA|cuMem|cuda[A-Z]|NVML|nvml/ || file ~ /cudawrap|nvmlwrap|cuda/) return "cuda"
	if (file ~ /\/transport\/|transport\.cc|channel\.cc|\/register\//) return "transport"
	if (file ~ /alloc|shm|mem/ || msg ~ /[Mm]alloc|mmap|[Oo]ut of memory|posix_memalign|[Ss]hared memory|\/dev\/shm/) return "resource"
	return "init-config"
}
{
	k = $2 SUBSEP $4
	if (!(k in first)) { first[k] = $1; last[k] = $1; vers[k] = $1; line[k] = $3; order[++n] = k; next }
	if (vkey($1) < vkey(first[k])) first[k] = $1
	if (vkey($1) >= vkey(last[k])) { last[k] = $1; line[k] = $3 }
	if (index("," vers[k] ",", "," $1 ",") == 0) vers[k] = vers[k] "," $1
}
END {
	for (i = 1; i <= n; i++) {
		k = order[i]
		split(k, p, SUBSEP)
		print class(p[1], p[2]) "\t" p[2] "\t" p[1] ":" line[k] "\t" first[k] "\t" last[k] "\t" vers[k]
	}
}
