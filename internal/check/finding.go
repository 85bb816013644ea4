// Package check holds the pure audit checks: functions of facts (and a
// platform profile, and for cluster checks the other nodes) that return
// findings. Nothing here reads files or runs commands.
package check
