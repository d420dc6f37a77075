package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"unicode/utf8"
)

// The names the gateway serves. Agent clients accept tool and prompt names matching
// ^[A-Za-z0-9_-]{1,64}$ once they have put their own prefix in front (mcp__airlock__,
// mcp_airlock_), and rewrite anything else in ways of their own: "." becomes "_",
// a long name is cut in its middle, two names become one stem and a hash. The
// person's dialog would then name another tool than the agent does. So the gateway
// serves a name of its own choosing wherever a qualified name SERVER__TOOL does not
// already fit:
//
//   - a qualified name made of A-Z a-z 0-9 _ - and at most the budget long is served
//     as it is;
//   - any other is served as its stem (every other character "_"; cut to fit, it
//     keeps SERVER__ and the end of the tool's name, see mappedName), "_", and the
//     first MinServedHash hex digits of the SHA-256 of the qualified name;
//   - where two served names would be the same, or a mapped name the name another
//     tool is served as it is, every mapped name of the clash takes one hex digit
//     more, until none clash (a name served as it is never changes); a name that
//     still clashes when no digit can be added is given no served name.
//
// The mapping depends only on the set of names and the budget, never on their
// order, so it is the same in every run over the same tools.

// DefaultNameBudget is the longest served name by default: 64 less the longest
// prefix a client commonly adds (mcp__airlock__ is 14 bytes) and room to spare.
const DefaultNameBudget = 44

// MaxServedNameLen is the longest name every client accepts.
const MaxServedNameLen = 64

// MinServedHash is the number of hex digits of the hash a mapped name ends with
// before any clash lengthens it.
const MinServedHash = 4

// ServedNameBudget is budget when it is between 1 and MaxServedNameLen, and
// DefaultNameBudget otherwise (zero: unset).
func ServedNameBudget(budget int) int {
	if budget < 1 || budget > MaxServedNameLen {
		return DefaultNameBudget
	}
	return budget
}

// servedByte reports whether c may be in a served name.
func servedByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// ServableAsIs reports whether the qualified name of r is served as it is: it is
// made of A-Z a-z 0-9 _ - only and is at most budget bytes long.
func ServableAsIs(r Ref, budget int) bool {
	budget = ServedNameBudget(budget)
	n := len(r.Server) + 2 + len(r.Tool)
	if n > budget || r.Server == "" && r.Tool == "" {
		return false
	}
	for i := 0; i < len(r.Server); i++ {
		if !servedByte(r.Server[i]) {
			return false
		}
	}
	for i := 0; i < len(r.Tool); i++ {
		if !servedByte(r.Tool[i]) {
			return false
		}
	}
	return true
}

// MappedBecause says why r is not served as it is ("" when it is): its qualified
// name is longer than the budget, or holds characters clients rewrite.
func MappedBecause(r Ref, budget int) string {
	budget = ServedNameBudget(budget)
	if ServableAsIs(r, budget) {
		return ""
	}
	q := r.Qualified()
	var why []string
	if len(q) > budget {
		why = append(why, "is longer than the "+itoa(budget)+"-byte name budget")
	}
	for i := 0; i < len(q); i++ {
		if !servedByte(q[i]) {
			why = append(why, "holds characters other than A-Z a-z 0-9 _ -")
			break
		}
	}
	return "its name " + strings.Join(why, " and ")
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// ServedNames is the mapping of one set of tools (or of prompts) to the names the
// gateway serves them under; MapServedNames makes it. A nil *ServedNames serves
// every name that fits the default budget as it is and maps none. It is read-only
// and safe for concurrent use.
type ServedNames struct {
	budget  int
	mapped  map[Ref]string // refs not served as they are -> their served name
	byName  map[string]Ref // the inverse of mapped
	unnamed map[Ref]bool   // refs given no served name: every name they could take clashed
}

// MapServedNames maps refs (their order does not matter; a ref listed twice counts
// once) to served names within budget (see ServedNameBudget): no two refs share a
// served name, and every served name matches ^[A-Za-z0-9_-]{1,64}$ and is at most
// budget bytes long.
func MapServedNames(refs []Ref, budget int) *ServedNames {
	budget = ServedNameBudget(budget)
	s := &ServedNames{budget: budget}
	var todo []Ref
	for _, r := range refs {
		if !ServableAsIs(r, budget) {
			todo = append(todo, r)
		}
	}
	if len(todo) == 0 {
		return s
	}
	slices.SortFunc(todo, compareRefs)
	todo = slices.Compact(todo)
	type entry struct {
		ref          Ref
		server, tool string // the stems of the server's and the tool's names
		hash         string
		digits       int
		name         string
		unnamed      bool
	}
	es := make([]entry, len(todo))
	for i, r := range todo {
		q := r.Qualified()
		sum := sha256.Sum256([]byte(q))
		e := entry{ref: r, server: servedStem(r.Server, false), tool: servedStem(r.Tool, true), hash: hex.EncodeToString(sum[:]), digits: MinServedHash}
		e.name = mappedName(e.server, e.tool, e.hash, e.digits, budget)
		es[i] = e
	}
	// Names some ref is served as it is: taken, whatever else wants them. Only
	// those that end like a mapped name ("_" and hex digits) can be wanted.
	taken := map[string]bool{}
	for _, r := range refs {
		if endsLikeMapped(r.Tool) && ServableAsIs(r, budget) {
			taken[r.Qualified()] = true
		}
	}
	byName := make(map[string][]int, len(es))
	work := make([]string, 0, len(es))
	for i := range es {
		if byName[es[i].name] == nil {
			work = append(work, es[i].name)
		}
		byName[es[i].name] = append(byName[es[i].name], i)
	}
	// Each round decides from the names as the round found them, so the outcome
	// does not depend on the order clashes are met in; only names that changed
	// are looked at again.
	for len(work) > 0 {
		var clashes []string
		for _, name := range work {
			if is := byName[name]; len(is) > 1 || len(is) == 1 && taken[name] {
				clashes = append(clashes, name)
			}
		}
		work = work[:0]
		inWork := map[string]bool{}
		var moved []int
		for _, name := range clashes {
			for _, i := range byName[name] {
				e := &es[i]
				next := mappedName(e.server, e.tool, e.hash, e.digits+1, budget)
				if e.digits >= len(e.hash) || next == e.name {
					e.unnamed = true
					continue
				}
				e.digits, e.name = e.digits+1, next
				moved = append(moved, i)
			}
			delete(byName, name)
		}
		for _, i := range moved {
			name := es[i].name
			if !inWork[name] {
				inWork[name] = true
				work = append(work, name)
			}
			byName[name] = append(byName[name], i)
		}
	}
	s.mapped = make(map[Ref]string, len(es))
	s.byName = make(map[string]Ref, len(es))
	for _, e := range es {
		if e.unnamed {
			if s.unnamed == nil {
				s.unnamed = map[Ref]bool{}
			}
			s.unnamed[e.ref] = true
			continue
		}
		s.mapped[e.ref] = e.name
		s.byName[e.name] = e.ref
	}
	return s
}

// endsLikeMapped reports whether a tool name, after SERVER__, ends as a mapped
// name does: "_" and at least MinServedHash lower-case hex digits.
func endsLikeMapped(tool string) bool {
	tail := tool[strings.LastIndexByte(tool, '_')+1:]
	if len(tail) < MinServedHash {
		return false
	}
	for i := 0; i < len(tail); i++ {
		if c := tail[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func compareRefs(a, b Ref) int {
	if c := strings.Compare(a.Server, b.Server); c != 0 {
		return c
	}
	return strings.Compare(a.Tool, b.Tool)
}

// servedStem is s with every character that may not be in a served name (each byte
// of invalid UTF-8 too) as "_", at most MaxServedNameLen bytes of it: its first
// ones, or with end its last ones.
func servedStem(s string, end bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, c := range s {
		if !end && b.Len() >= MaxServedNameLen {
			break
		}
		if c < utf8.RuneSelf && servedByte(byte(c)) {
			b.WriteByte(byte(c))
		} else {
			b.WriteByte('_')
		}
	}
	out := b.String()
	return out[max(len(out)-MaxServedNameLen, 0):]
}

// mappedName is SERVER__TOOL (their stems) cut to fit, "_" and digits hex digits
// of hash, within budget; below room for one byte of stem, the hash alone, cut to
// the budget. What is cut is the middle of the tool's name, which of a family of
// tools is what they share ("github_repos_content_"): the server and the end of
// the tool's name (where its verb usually is, "delete_permanently") are kept.
// The tool's end gets what the server leaves, and at least a quarter of the
// room: a longer server gives way from its end.
func mappedName(server, tool, hash string, digits, budget int) string {
	digits = min(digits, len(hash))
	if digits+2 > budget {
		return hash[:min(digits, budget)]
	}
	room := budget - 1 - digits
	suffix := "_" + hash[:digits]
	if len(server)+2+len(tool) <= room {
		return server + "__" + tool + suffix
	}
	want := min(len(tool), max(room/4, 1))
	if keep := room - len(server) - 2; keep >= want {
		end := tool[len(tool)-keep:]
		// From the start of a word when that still leaves the tool its share.
		if i := strings.IndexAny(end, "_-"); i >= 0 && i < len(end)-1 && len(end)-i-1 >= want && tool[len(tool)-keep-1] != '_' && tool[len(tool)-keep-1] != '-' {
			end = end[i+1:]
		}
		return server + "__" + end + suffix
	}
	if sroom := room - want - 2; sroom >= 1 {
		return server[:sroom] + "__" + tool[len(tool)-want:] + suffix
	}
	return tool[max(len(tool)-room, 0):] + suffix
}

// Budget is the name budget the mapping was made for.
func (s *ServedNames) Budget() int {
	if s == nil {
		return DefaultNameBudget
	}
	return s.budget
}

// Name is the name r is served under, and false when r is given none. It is
// meaningful for the refs the mapping was made of: any other ref that fits is
// served as it is, and one that does not has no name.
func (s *ServedNames) Name(r Ref) (string, bool) {
	if ServableAsIs(r, s.Budget()) {
		return r.Qualified(), true
	}
	if s == nil {
		return "", false
	}
	name, ok := s.mapped[r]
	return name, ok
}

// Lookup reads a served name back into the ref it is served for: a mapped name
// into its ref, any other name that fits into SERVER and TOOL split at the first
// "__". The caller checks that such a tool exists; a qualified name that does not
// fit (the original long or dotted name of a mapped tool) is never read back.
func (s *ServedNames) Lookup(name string) (Ref, bool) {
	if s != nil {
		if r, ok := s.byName[name]; ok {
			return r, true
		}
	}
	server, tool, ok := strings.Cut(name, "__")
	r := Ref{Server: server, Tool: tool}
	if !ok || server == "" || tool == "" || !ServableAsIs(r, s.Budget()) {
		return Ref{}, false
	}
	return r, true
}

// Mapped is how many refs are served under a name of airlock's choosing.
func (s *ServedNames) Mapped() int {
	if s == nil {
		return 0
	}
	return len(s.mapped)
}
