package facts

// parseOSRelease reads /etc/os-release (os-release(5)).
func parseOSRelease(b []byte) OSInfo {
	kv := parseKeyValues(b)
	return OSInfo{ID: kv["ID"], VersionID: kv["VERSION_ID"], PrettyName: kv["PRETTY_NAME"]}
}

// parseDGXRelease reads /etc/dgx-release; nil when it names no DGX.
func parseDGXRelease(b []byte) *DGXRelease {
	kv := parseKeyValues(b)
	if kv["DGX_NAME"] == "" {
		return nil
	}
	v := kv["DGX_SWBUILD_VERSION"]
	if v == "" {
		v = kv["DGX_OTA_VERSION"]
	}
	return &DGXRelease{Name: kv["DGX_NAME"], Version: v}
}
