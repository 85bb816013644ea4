package health

// The node-problem-detector custom plugin protocol
// (kubernetes/node-problem-detector pkg/custompluginmonitor/plugin/plugin.go):
// exit 0 is OK (the condition is False), 1 a problem (NonOK: True), anything
// else, or no answer within the rule's timeout, Unknown; stdout, trimmed,
// is cut to max_output_length bytes (80 by default) for the condition's
// message.
const (
	NPDOK      = 0
	NPDProblem = 1
	// NPDUnknown is 3, sparkrig's "could not evaluate" everywhere.
	NPDUnknown = 3
	// NPDMinOutput is the shortest max_output_length sparkrig answers in.
	NPDMinOutput = 16
)

// Answer is a plugin's answer: its exit status and its one line.
type Answer struct {
	Code int
	Line string
}

// NPD is the plugin's answer for a verdict, the line within max bytes: a
// problem names the first finding that makes the node unhealthy; unknown
// names what could not be read.
func NPD(v Verdict, max int) Answer {
	code := NPDOK
	switch v.State {
	case Unhealthy:
		code = NPDProblem
	case Unknown:
		code = NPDUnknown
	}
	return Answer{Code: code, Line: v.Why(max)}
}

// NPDCannot is the unknown answer when sparkrig cannot judge at all: a bad
// flag, no evidence. why is said as it is, cut to max bytes.
func NPDCannot(why string, max int) Answer {
	return Answer{Code: NPDUnknown, Line: cut(clean(Prefix+" "+why), max)}
}
