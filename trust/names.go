package trust

import "strconv"

// MaxToolNameLen is the longest tool name airlock accepts, in bytes.
const MaxToolNameLen = 128

// ValidToolName reports whether name is a valid MCP tool name: 1 to 128 ASCII
// characters from A-Z a-z 0-9 _ . -. Anything else (spaces, control characters,
// look-alike letters from other scripts) is rejected, so such a tool is never exposed
// through the gateway.
func ValidToolName(name string) bool {
	if len(name) == 0 || len(name) > MaxToolNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !toolNameByte(name[i]) {
			return false
		}
	}
	return true
}

func toolNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '_' || c == '.' || c == '-'
}

// ValidServerName reports whether name matches ^[a-z0-9][a-z0-9-]{0,31}$, the server
// names the config accepts. Such a name cannot contain "__", which keeps the gateway's
// SERVER__TOOL names unambiguous.
func ValidServerName(name string) bool {
	if len(name) == 0 || len(name) > 32 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || (c == '-' && i > 0)
		if !ok {
			return false
		}
	}
	return true
}

// The sentences NameProblems returns.
const (
	problemInvalidName = "name is not a valid MCP tool name (allowed: A-Z a-z 0-9 _ . -, 1-128 chars)"
	problemDuplicate   = "duplicate tool name: the server lists it "
)

// NameProblems checks one server's tool list and maps the index of every rejected
// name to a sentence saying why, suitable for Tool.NameProblem: names that are not
// ValidToolName, and every occurrence of a name the list holds more than once
// ("duplicate tool name: the server lists it 2 times"). A name with both problems gets
// both sentences joined by "; ". The result is nil when every name is fine.
func NameProblems(names []string) map[int]string {
	count := make(map[string]int, len(names))
	for _, n := range names {
		count[n]++
	}
	var out map[int]string
	for i, n := range names {
		var s string
		if !ValidToolName(n) {
			s = problemInvalidName
		}
		if k := count[n]; k > 1 {
			if s != "" {
				s += "; "
			}
			s += problemDuplicate + strconv.Itoa(k) + " times"
		}
		if s != "" {
			if out == nil {
				out = make(map[int]string)
			}
			out[i] = s
		}
	}
	return out
}
