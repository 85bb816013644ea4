package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/render"
)

// helpFunc writes a command's help laid out within the terminal's width:
// the description reflowed, examples broken as shell lines, subcommands and
// flags with their descriptions wrapped under themselves.
func helpFunc(env *Env) func(*cobra.Command, []string) {
	return func(c *cobra.Command, _ []string) {
		w := width(env)
		var b strings.Builder
		text := c.Long
		if text == "" {
			text = c.Short
		}
		// Prose reads best at most 80 columns wide, however wide the terminal.
		if text = strings.TrimRight(text, " \n"); text != "" {
			b.WriteString(render.Reflow(text, min(w, 80)) + "\n")
		}
		if c.Runnable() || c.HasSubCommands() {
			writeUsage(&b, c, w)
		}
		io.WriteString(c.OutOrStdout(), b.String())
	}
}

// writeUsage is cobra's usage section, within width w.
func writeUsage(b *strings.Builder, c *cobra.Command, w int) {
	b.WriteString("Usage:\n")
	if c.Runnable() && c.Annotations[groupOnly] == "" {
		b.WriteString(render.ReflowShell("  "+c.UseLine(), w) + "\n")
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("  " + c.CommandPath() + " [command]\n")
	}
	if len(c.Aliases) > 0 {
		b.WriteString("\nAliases:\n  " + c.NameAndAliases() + "\n")
	}
	if c.HasExample() {
		b.WriteString("\nExamples:\n" + render.ReflowShell(c.Example, w) + "\n")
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\nAvailable Commands:\n")
		pad := 0
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() || s.Name() == "help" {
				pad = max(pad, len(s.Name()))
			}
		}
		var list []string
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() || s.Name() == "help" {
				list = append(list, fmt.Sprintf("  %-*s  %s", pad, s.Name(), s.Short))
			}
		}
		b.WriteString(render.Reflow(strings.Join(list, "\n"), w))
	}
	if c.HasAvailableLocalFlags() {
		b.WriteString("\nFlags:\n" + strings.TrimRight(c.LocalFlags().FlagUsagesWrapped(w), " \n") + "\n")
	}
	if c.HasAvailableInheritedFlags() {
		b.WriteString("\nGlobal Flags:\n" + strings.TrimRight(c.InheritedFlags().FlagUsagesWrapped(w), " \n") + "\n")
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\n" + render.Reflow(fmt.Sprintf("Use \"%s [command] --help\" for more information about a command.", c.CommandPath()), w))
	}
}
