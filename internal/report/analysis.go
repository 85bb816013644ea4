package report

// AnalysisResult is one analysed benchmark file or run. Owned by the analyze stage.
type AnalysisResult struct {
	File  string `json:"file"`
	Error string `json:"error,omitempty"`
}
