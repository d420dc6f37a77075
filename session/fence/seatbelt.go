package fence

import (
	"fmt"
	"strings"
)

// SeatbeltProfile is the sandbox-exec profile for a command on macOS: nothing is
// allowed unless listed; the command may run its own programs, read the system's
// folders and its own files and the config's read paths, write the config's write
// paths and its temporary folder, and reach the network only with network = "all".
// Signals and process inspection are limited to processes in the same sandbox.
func SeatbeltProfile(own []string, tmp string, sb Sandbox) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(deny default)\n")
	b.WriteString("(allow process-exec process-fork)\n")
	b.WriteString("(allow signal (target same-sandbox))\n")
	b.WriteString("(allow process-info* (target same-sandbox))\n")
	b.WriteString("(allow sysctl-read)\n(allow mach-lookup)\n(allow ipc-posix-shm)\n")
	b.WriteString("(allow file-read-metadata)\n")
	read := []string{"/usr", "/bin", "/sbin", "/System", "/Library/Apple", "/private/etc/ssl", "/private/var/db/timezone",
		"/private/etc/localtime", "/private/etc/hosts", "/private/etc/resolv.conf", "/private/etc/passwd", "/private/etc/group",
		"/dev/urandom", "/dev/random", "/opt/homebrew"}
	read = append(read, own...)
	read = append(read, sb.Read...)
	b.WriteString("(allow file-read*")
	for _, p := range read {
		fmt.Fprintf(&b, "\n  (subpath %s)", quote(p))
	}
	b.WriteString(")\n")
	write := []string{"/dev/null", "/dev/zero"}
	if tmp != "" {
		write = append(write, tmp)
	}
	write = append(write, sb.Write...)
	b.WriteString("(allow file-read* file-write*")
	for _, p := range write {
		fmt.Fprintf(&b, "\n  (subpath %s)", quote(p))
	}
	b.WriteString(")\n")
	if sb.Network == "all" {
		b.WriteString("(allow network*)\n")
	}
	return b.String()
}

// quote writes s as a Seatbelt (Scheme) string: backslashes and double quotes
// escaped, so that no path can end the string and add a rule.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
