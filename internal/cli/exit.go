package cli

// Exit statuses follow the monitoring-plugin convention (Nagios, Icinga, gcm),
// so sparkrig drops into existing monitoring as is.
const (
	ExitOK          = 0   // nothing worse than info
	ExitWarning     = 1   // a warn finding, no fail
	ExitCritical    = 2   // a fail finding (or a result below its threshold)
	ExitUnknown     = 3   // could not evaluate: usage error, capture failed, bad input, host unreachable
	ExitInterrupted = 130 // interrupted by a signal
)

const exitHelp = `Exit status (monitoring-plugin convention):
  0    OK        nothing worse than info
  1    WARNING   a warn finding, no fail
  2    CRITICAL  a fail finding, or a result below its threshold
  3    UNKNOWN   could not evaluate: usage error, capture failed, bad snapshot or input, host unreachable
  130  interrupted`
