package expect

import "hash/crc32"

// The embedded catalogues are also compiled in as Go values
// (catalogue_gen.go, written by TestGeneratedCatalogues with
// -update-generated): reading signatures.yaml with a YAML decoder costs
// more than all else analyze does before its first line. The values
// stand in for a file only while the file is the one they were written
// from; an edited file is read as before until they are written again.

// fresh reports whether the embedded file is the one of the given length
// and checksum (CRC-32, IEEE).
func fresh(file []byte, n int, crc uint32) bool {
	return len(file) == n && crc32.ChecksumIEEE(file) == crc
}
