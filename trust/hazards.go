package trust

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Assessed is one classified tool as Hazards sees it: who it is, the description the
// server gave it (read for shadowing), and its classification.
type Assessed struct {
	Ref         Ref
	Description string
	// Text is every text field of the tool that reaches a model (ToolText of its
	// definition); shadowing reads it, or Description when it is empty.
	Text string
	// Fingerprint is the tool definition's fingerprint: two servers listing one name
	// with the same fingerprint are one program twice, not a decoy.
	Fingerprint string
	Class       Classification
	// AllowRule names an allow rule of the tool ("" when none): some arguments then
	// run unasked whatever the tier's policy, so the tool's legs count as unguarded
	// (docs/rules.md).
	AllowRule string
	// Untrusted says the tool's server is not trusted (its own claims are not
	// believed): one such server alone is one untrusted-server finding.
	Untrusted bool
}

// The leg keys of Hazard.Legs that are not trifecta legs.
const (
	// HazardLegDestructive is the key of untrusted-destructive's destructive tools.
	HazardLegDestructive = "destructive"
	// HazardLegShadowing is the key of the tool whose description names others.
	HazardLegShadowing = "shadowing"
	// HazardLegShadowed is the key of the other servers' tools that description names.
	HazardLegShadowed = "shadowed"
	// HazardLegPersistent is the key of untrusted-persistence's writes to persistent
	// stores.
	HazardLegPersistent = string(LegPersistent)
)

// Hazards reports the risks of a toolset as a whole (docs/design.md), over the tools
// whose tier is not TierBlocked (a blocked tool is never called nor served, so it fills
// no leg and shadows nothing):
//
//   - lethal-trifecta (critical): some tool in each of untrusted-content, private-data
//     and exfiltration;
//   - open-world-exfiltration (high): an untrusted-content tool and an exfiltration tool,
//     possibly the same one;
//   - untrusted-destructive (high): an untrusted-content tool and a destructive-tier
//     tool, under the keys "untrusted-content" and "destructive";
//   - untrusted-persistence (high): an untrusted-content tool and a write to a
//     persistent store (Classification.Persistent), under "untrusted-content" and
//     "persistent": what untrusted content makes the model write there outlives the
//     context and reaches later ones;
//   - shadowing (high): one hazard per tool whose description names a tool of another
//     server, under "shadowing" (that tool) and "shadowed" (the tools it names).
//
// Every leg lists qualified names (SERVER__TOOL) without repeats, the ones that run
// unasked (Action Allow, or an allow rule) first, each part sorted: a reader of a
// long leg sees first what makes the hazard unguarded. A hazard
// is Unguarded when it can be completed without a person seeing a call: each of its
// legs holds a tool whose Action is Allow. Shadowing is the exception to "each leg": a
// description reaches the model when tools are listed, with no call at all, so a
// shadowing hazard is unguarded as soon as one shadowed tool is auto-allowed.
//
// Summary is one sentence naming one tool of each leg, one that runs unasked where
// the leg has one, and how many more there are (a channel as LegName says it). It holds server-controlled tool names, so escape it before display like any
// other untrusted text.
//
// The result is ordered by severity, then kind in the order above, then the first
// name of the first leg; it is nil when there is no hazard. The cost is linear in the
// number of tools and the length of their descriptions, plus one sort of the tools by
// name (skipped when they come sorted): legs are lists, and combinations of tools are
// never enumerated.
//
// Shadowing reads each description as whole-word tokens of [A-Za-z0-9_.-]+, each tried
// as it is and without leading and trailing '.' and '-' (so the full stop that ends a
// sentence does not hide a name). A token names a tool when it equals a qualified name
// SERVER__TOOL, or when it equals a bare tool name that is distinctive: it contains
// '_', '-', '.', a digit, or a lower-to-upper case change (send_email, fetch-url,
// sendEmail, get2). Plain words such as "search" or "list" are common English and would
// make every toolset with two search tools look hostile, so they only count qualified.
func Hazards(tools []Assessed) []Hazard {
	return hazards(tools, nil, nil)
}

// Shadowing is the shadowing part of Hazards worked out for one toolset: the hazards
// and, for each, the tools it names; everything but Unguarded, which is the only part
// that reads a tool's Action. It depends on nothing but which tools are live (not
// TierBlocked) and their refs, descriptions, texts and fingerprints, so a change that
// moves only Actions and legs (a what-if on a server's trust or a tool's policy) can
// reuse it instead of reading every description again. It also holds which tools
// were auto-allowed and how many auto-allowed tools each hazard names, so that the
// next call updates Unguarded only for the tools whose Action moved. It is never
// changed once made.
type Shadowing struct {
	scan  *shadowScanResult // shared by every Shadowing made from one scan
	allow []bool            // per tool of the toolset: its Action was Allow (live tools only)
	count []int32           // per hazard: how many of its hits were in allow
	legs  [5]int            // how many names the legs uc, pd, ex, de, pw held: the next call's sizes
}

// shadowScanResult is what reading the descriptions found. It is never changed once
// made.
type shadowScanResult struct {
	hazards   []Hazard    // Unguarded unset
	hits      [][]int     // per hazard, the indices in the toolset of the tools it names
	keys      []shadowKey // per tool of the toolset, what the result depends on
	qualified []string    // per tool, its qualified name ("" when it is blocked)
	live      []int       // the tools not blocked, sorted by qualified name
	// byTool is built on first use (kept only): hitBy[hitFrom[j]:hitFrom[j+1]] are
	// the hazards that name tool j, once per hit; the tools whose Action moved find
	// the hazards to update there. A scan that is never reused never builds it.
	byTool  sync.Once
	ntools  int
	hitFrom []int
	hitBy   []int32
	// Kept only, for the next scan of a toolset with the same tools (a server that
	// changed descriptions): the name index, and per tool its hazard (-1 for none)
	// and the name chains its text looked up (chain heads), so that only the tools
	// whose text changed, or whose text names a tool whose definition changed, are
	// read again.
	index    *shadowIndex
	hazardOf []int32
	mentions [][]int32
	// rescanned is how many texts this scan read (all live tools, or the changed few).
	rescanned int
}

// newShadowing works the shadowing part out for tools.
// With keep, it also notes what each tool looked like, for reusable and for the
// next scan; prev, when not nil, is the last kept scan: when tools are the same
// tools (same refs, index for index, and the same ones blocked), only the texts that
// may read differently are scanned again.
func newShadowing(tools []Assessed, keep bool, prev *shadowScanResult) *shadowScanResult {
	if prev != nil && prev.sameTools(tools) {
		return prev.rescan(tools)
	}
	// Sort the live tools by qualified name once; every leg is then filled in order
	// and comes out sorted, and a repeated tool is adjacent and dropped.
	qualified := make([]string, len(tools))
	live := make([]int, 0, len(tools))
	for i := range tools {
		if tools[i].Class.Tier == TierBlocked {
			continue
		}
		qualified[i] = tools[i].Ref.Qualified()
		live = append(live, i)
	}
	byName := func(a, b int) int {
		if c := strings.Compare(qualified[a], qualified[b]); c != 0 {
			return c
		}
		return a - b // a tool listed twice: keep input order, deterministically
	}
	if !slices.IsSortedFunc(live, byName) {
		slices.SortFunc(live, byName)
	}
	ix := newShadowIndex(tools, live)
	sh := &shadowScanResult{qualified: qualified, live: live}
	var hazardOf []int32
	var mentions [][]int32
	if keep {
		hazardOf = make([]int32, len(tools))
		for i := range hazardOf {
			hazardOf[i] = -1
		}
		mentions = make([][]int32, len(tools))
	}
	sc := ix.scanner(tools, keep)
	for _, i := range live {
		h, hits, ment := sc.read(i, qualified)
		if keep {
			mentions[i] = ment
		}
		if hits == nil {
			continue
		}
		if keep {
			hazardOf[i] = int32(len(sh.hazards))
		}
		sh.hazards = append(sh.hazards, h)
		sh.hits = append(sh.hits, hits)
	}
	sh.rescanned = len(live)
	if keep {
		// The kept index holds nothing of tools, which the caller may overwrite.
		ix.byRef = &refIndex{live: live, m: ix.byRef.m}
		sh.index, sh.hazardOf, sh.mentions = ix, hazardOf, mentions
		sh.note(tools)
	}
	return sh
}

// note fills what a kept scan remembers of tools: their keys.
func (sh *shadowScanResult) note(tools []Assessed) {
	sh.keys = make([]shadowKey, len(tools))
	for i := range tools {
		sh.keys[i] = shadowKeyOf(&tools[i])
	}
	sh.ntools = len(tools)
}

// hitsByTool returns hitFrom and hitBy, built once.
func (sh *shadowScanResult) hitsByTool() ([]int, []int32) {
	sh.byTool.Do(func() {
		n := sh.ntools
		from := make([]int, n+1)
		for _, hits := range sh.hits {
			for _, j := range hits {
				from[j+1]++
			}
		}
		for j := range n {
			from[j+1] += from[j]
		}
		by := make([]int32, from[n])
		fill := slices.Clone(from[:n])
		for k, hits := range sh.hits {
			for _, j := range hits {
				by[fill[j]] = int32(k)
				fill[j]++
			}
		}
		sh.hitFrom, sh.hitBy = from, by
	})
	return sh.hitFrom, sh.hitBy
}

// sameTools reports whether tools are the tools sh was made from, index for index,
// in everything but their texts and fingerprints: the same refs, the same ones live.
// The name index then still holds.
func (sh *shadowScanResult) sameTools(tools []Assessed) bool {
	if sh.index == nil || len(sh.keys) != len(tools) {
		return false
	}
	for i := range tools {
		k := &sh.keys[i]
		if k.ref != tools[i].Ref || k.live != (tools[i].Class.Tier != TierBlocked) {
			return false
		}
	}
	return true
}

// rescan is newShadowing for the same tools as sh with some texts or fingerprints
// changed (a server that re-listed with new descriptions). A tool's hits depend on
// its own text and, through the decoy rule, on the fingerprints of the tools of each
// name it looks up; so the texts read again are the changed ones and those that
// looked up a name one of whose tools changed its fingerprint. Everything else is
// taken from sh, and the result is the one a full scan gives.
func (sh *shadowScanResult) rescan(tools []Assessed) *shadowScanResult {
	ix := sh.index
	read := make([]bool, len(tools))
	changedChain := map[int32]bool{}
	changed := false
	for i := range tools {
		k := &sh.keys[i]
		t := &tools[i]
		if k.description == t.Description && k.text == t.Text && k.fp == t.Fingerprint {
			continue
		}
		changed = true
		if !k.live {
			continue // not scanned, and in no chain
		}
		read[i] = true
		if k.fp != t.Fingerprint {
			changedChain[int32(ix.head[strings.ToLower(t.Ref.Tool)])] = true
		}
	}
	if !changed {
		return sh
	}
	if len(changedChain) > 0 {
		for _, i := range sh.live {
			if read[i] {
				continue
			}
			for _, c := range sh.mentions[i] {
				if changedChain[c] {
					read[i] = true
					break
				}
			}
		}
	}
	next := &shadowScanResult{qualified: sh.qualified, live: sh.live, index: ix}
	next.hazards = make([]Hazard, 0, len(sh.hazards)+8)
	next.hits = make([][]int, 0, len(sh.hits)+8)
	next.hazardOf = make([]int32, len(tools))
	next.mentions = make([][]int32, len(tools))
	sc := ix.scanner(tools, true)
	for _, i := range sh.live {
		var h Hazard
		var hits []int
		if read[i] {
			h, hits, next.mentions[i] = sc.read(i, sh.qualified)
			next.rescanned++
		} else if next.mentions[i] = sh.mentions[i]; sh.hazardOf[i] >= 0 {
			h, hits = sh.hazards[sh.hazardOf[i]], sh.hits[sh.hazardOf[i]]
		}
		if hits == nil {
			next.hazardOf[i] = -1
			continue
		}
		next.hazardOf[i] = int32(len(next.hazards))
		next.hazards = append(next.hazards, h)
		next.hits = append(next.hits, hits)
	}
	for i := range tools {
		if !sh.keys[i].live {
			next.hazardOf[i] = -1
		}
	}
	next.note(tools)
	return next
}

type shadowKey struct {
	ref                   Ref
	description, text, fp string
	live                  bool
}

func shadowKeyOf(t *Assessed) shadowKey {
	return shadowKey{ref: t.Ref, description: t.Description, text: t.Text, fp: t.Fingerprint, live: t.Class.Tier != TierBlocked}
}

// reusable reports whether s was made from a toolset that matches tools, index for
// index, in everything shadowing reads.
func (s *Shadowing) reusable(tools []Assessed) bool {
	if s == nil || len(s.scan.keys) != len(tools) {
		return false
	}
	for i := range tools {
		if s.scan.keys[i] != shadowKeyOf(&tools[i]) {
			return false
		}
	}
	return true
}

// HazardsReusing is Hazards, with the shadowing part taken from prev when prev was
// made from a toolset that differs from tools in nothing shadowing reads (checked
// here, tool by tool; anything else is worked out again). It returns the hazards and
// the Shadowing to pass next time. The result is exactly Hazards(tools). It shares
// the legs and name slices of its hazards with prev and with other calls' results:
// they are read-only (see Hazard). It keeps nothing of the tools slice itself, so
// the caller may overwrite it for the next call. prev may be nil.
func HazardsReusing(tools []Assessed, prev *Shadowing) ([]Hazard, *Shadowing) {
	next := &Shadowing{}
	if prev.reusable(tools) {
		next.scan = prev.scan
	} else {
		var last *shadowScanResult
		if prev != nil {
			last = prev.scan
		}
		next.scan = newShadowing(tools, true, last)
		prev = nil
	}
	return hazards(tools, next, prev), next
}

// hazards is Hazards over tools. sh holds the shadowing part (worked out here when
// nil); its allow and count are filled here. prev, when not nil, was made from the
// same scan: Unguarded is then updated from its counts for the tools whose Action
// moved, instead of counted again over every hit.
func hazards(tools []Assessed, sh, prev *Shadowing) []Hazard {
	if sh == nil {
		sh = &Shadowing{scan: newShadowing(tools, false, nil)}
	}
	scan := sh.scan
	qualified, live := scan.qualified, scan.live

	var uc, pd, ex, de, pw legTools
	if prev != nil { // a what-if: the legs are about as long as last time
		for k, l := range []*legTools{&uc, &pd, &ex, &de, &pw} {
			l.names = make([]string, 0, prev.legs[k]+prev.legs[k]/8+8)
		}
	} else { // counted first: at 10,000 tools, growing them was most of what this allocated
		var n [5]int
		for _, i := range live {
			eachLeg(&tools[i].Class, func(k int) { n[k]++ })
		}
		for k, l := range []*legTools{&uc, &pd, &ex, &de, &pw} {
			l.names = make([]string, 0, n[k])
		}
	}
	// ucFirstUntrusted: the first tool of the untrusted-content leg (its names are
	// sorted, so uc.names[0]) is of an untrusted server.
	ucFirstUntrusted := false
	// actionAllow[i]: live tool i's Action is Allow, for the shadowing hazards'
	// Unguarded: their hits are read from this small array, not from tools (a cache
	// miss per hit, and a shadowing toolset has tens of hits per hazard).
	var actionAllow []bool
	if len(scan.hazards) > 0 {
		actionAllow = make([]bool, len(tools))
	}
	lists := [5]*legTools{&uc, &pd, &ex, &de, &pw}
	for _, i := range live {
		c := &tools[i].Class
		q := qualified[i]
		allowed := c.Action == Allow
		if actionAllow != nil {
			actionAllow[i] = allowed
		}
		rule := ""
		if !allowed && tools[i].AllowRule != "" {
			allowed, rule = true, q+": rule "+tools[i].AllowRule
		}
		eachLeg(c, func(k int) {
			if k == 0 && len(uc.names) == 0 {
				ucFirstUntrusted = tools[i].Untrusted
			}
			lists[k].add(q, allowed, rule)
		})
	}

	// The hazards below share these lists (read-only, see Hazard); capped, so that
	// even a careless append copies instead of writing into another hazard's leg.
	uc.names, pd.names, ex.names, de.names, pw.names = slices.Clip(uc.names), slices.Clip(pd.names), slices.Clip(ex.names), slices.Clip(de.names), slices.Clip(pw.names)
	sh.legs = [5]int{len(uc.names), len(pd.names), len(ex.names), len(de.names), len(pw.names)}
	out := make([]Hazard, 0, 5+len(scan.hazards)) // at most five toolset hazards, then shadowing
	if len(uc.names) > 0 && len(pd.names) > 0 && len(ex.names) > 0 {
		out = append(out, Hazard{
			Kind:      HazardLethalTrifecta,
			Severity:  SeverityCritical,
			Unguarded: uc.allowed && pd.allowed && ex.allowed,
			Rules:     ruleNames(uc.allowed && pd.allowed && ex.allowed, uc, pd, ex),
			Unasked:   unaskedOf(&uc, &pd, &ex),
			Legs: map[string][]string{
				string(LegUntrustedContent): uc.ordered(),
				string(LegPrivateData):      pd.ordered(),
				string(LegExfiltration):     ex.ordered(),
			},
			Summary: uc.example(pd.names, ex.names) + " reads untrusted content, " +
				pd.example(uc.names, ex.names) + " reads private data, " +
				ex.example(uc.names, pd.names) + " can send it out",
		})
	}
	if server, ok := oneServer(uc.names, ex.names, de.names, pw.names); ok && len(uc.names) > 0 && ucFirstUntrusted && (len(ex.names) > 0 || len(de.names) > 0) {
		// One untrusted server alone: its content can reach only its own
		// tools (another server's persistent store is one more it reaches). One finding, not two pair hazards that name it twice. (A
		// trusted server alone keeps the pair hazards: its own hints said so.)
		unguarded := uc.allowed && (ex.allowed || de.allowed)
		out = append(out, Hazard{
			Kind:      HazardUntrustedServer,
			Severity:  SeverityMedium,
			Unguarded: unguarded,
			Rules:     ruleNames(unguarded, uc, ex, de),
			Unasked:   slices.Clip(uc.unasked),
			Legs: map[string][]string{
				string(LegUntrustedContent): uc.ordered(),
			},
			Summary: untrustedServerSummary(server, uc, ex, de),
		})
		uc = legTools{} // no pair hazard for the same server
	}
	if len(uc.names) > 0 && len(ex.names) > 0 {
		out = append(out, pairHazard(HazardOpenWorldExfiltration, &uc, &ex, string(LegExfiltration), "can send it out"))
	}
	if len(uc.names) > 0 && len(de.names) > 0 {
		out = append(out, pairHazard(HazardUntrustedDestructive, &uc, &de, HazardLegDestructive, "can make destructive changes"))
	}
	if len(uc.names) > 0 && len(pw.names) > 0 {
		h := pairHazard(HazardUntrustedPersistence, &uc, &pw, HazardLegPersistent, "writes to a persistent store")
		h.Summary = "untrusted content can persist: " + h.Summary
		out = append(out, h)
	}
	// The shadowing hazards' legs are the scan's own, shared with every result made
	// from it: hazards are read-only (see Hazard), so handing them out costs no copy.
	// Unguarded: some named tool is auto-allowed (count > 0).
	var count []int32
	switch {
	case len(scan.hazards) == 0:
	case prev != nil && scan.keys != nil:
		hitFrom, hitBy := scan.hitsByTool()
		count = slices.Clone(prev.count)
		for _, i := range live {
			if actionAllow[i] == prev.allow[i] {
				continue
			}
			d := int32(1)
			if !actionAllow[i] {
				d = -1
			}
			for _, k := range hitBy[hitFrom[i]:hitFrom[i+1]] {
				count[k] += d
			}
		}
	default:
		count = make([]int32, len(scan.hazards))
		for k, hits := range scan.hits {
			for _, j := range hits {
				if actionAllow[j] { // hits are live tools
					count[k]++
				}
			}
		}
	}
	sh.allow, sh.count = actionAllow, count
	base := len(out)
	out = append(out, scan.hazards...)
	for k := range scan.hazards {
		if count[k] > 0 {
			out[base+k] = unaskedFirst(out[base+k], scan.hits[k], int(count[k]), actionAllow, qualified)
		}
	}
	if len(out) == 0 {
		out = nil
	}
	return out
}

// unaskedFirst is the unguarded shadowing hazard h (shared with the scan: never
// written) with its shadowed tools that run unasked first and in Unasked, and its
// summary naming one of them, as every other hazard's legs are ordered. hits are
// the shadowed tools' indexes in the leg's order (read sorts them by name, so the
// hits of one name, a name listed twice, are next to each other), allowed how many
// of them are in allow, which says which run unasked. A what-if recomputes every
// unguarded shadowing hazard, so the common case reads only the hits that lead
// (BenchmarkWhatIfRecompute); only a hazard whose unasked tools do not already lead
// pays for a pass over its hits and a new leg and map.
func unaskedFirst(h Hazard, hits []int, allowed int, allow []bool, qualified []string) Hazard {
	old := h.Legs[HazardLegShadowed]
	h.Unguarded = true
	twice := len(old) < len(hits) // a name listed twice: its hits are next to each other
	var unasked, lead int
	if !twice {
		// Hit i is the leg's name i, and allowed (the hits in allow, counted
		// already) is how many names run unasked. Only the ones that lead are read.
		unasked = allowed
		for lead < len(hits) && allow[hits[lead]] {
			lead++
		}
	} else {
		leading := true
		eachName(hits, twice, allow, qualified, func(_ string, ask bool) {
			leading = leading && ask
			if ask {
				unasked++
				if leading {
					lead++
				}
			}
		})
	}
	if lead == unasked {
		// The unasked already lead: the shared leg as it is.
		h.Unasked = old[:lead:lead]
		return h
	}
	// One leg, the unasked names first: the same walk of the hits, each name put
	// at the front or after the unasked ones.
	shadowed := make([]string, len(old))
	front, back := 0, unasked
	eachName(hits, twice, allow, qualified, func(name string, ask bool) {
		if ask {
			shadowed[front] = name
			front++
		} else {
			shadowed[back] = name
			back++
		}
	})
	h.Unasked = shadowed[:unasked:unasked]
	h.Summary = withExample(h.Summary, old, shadowed)
	h.Legs = map[string][]string{HazardLegShadowing: h.Legs[HazardLegShadowing], HazardLegShadowed: shadowed}
	return h
}

// eachName walks hits as the leg's names, in order, each once with whether it runs
// unasked (one of its tools is in allow); with twice false no name is listed twice,
// so each hit is a name of its own and no names are compared.
func eachName(hits []int, twice bool, allow []bool, qualified []string, f func(name string, unasked bool)) {
	for a := 0; a < len(hits); {
		b, ask := a+1, allow[hits[a]]
		for ; twice && b < len(hits) && qualified[hits[b]] == qualified[hits[a]]; b++ {
			ask = ask || allow[hits[b]]
		}
		f(qualified[hits[a]], ask)
		a = b
	}
}

// withExample is summary, which ends in example(old) as read wrote it (old[0] and
// " (+N)"), naming shadowed's first name instead; the count is the same. Only the
// name is cut out, without building example(old); a summary that does not end so
// is given the example the slow way.
func withExample(summary string, old, shadowed []string) string {
	tail := len(old[0])
	if len(old) > 1 {
		tail += len(" (+)") + digits(len(old)-1)
	}
	cut := len(summary) - tail
	if cut < 0 || summary[cut:cut+len(old[0])] != old[0] {
		return strings.TrimSuffix(summary, example(old)) + example(shadowed)
	}
	return summary[:cut] + shadowed[0] + summary[cut+len(old[0]):]
}

// digits is how many decimal digits n > 0 has, as strconv.Itoa writes it.
func digits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// oneServer reports whether every name of the legs belongs to one server, and
// which.
func oneServer(legs ...[]string) (string, bool) {
	server := ""
	for _, l := range legs {
		for _, n := range l {
			s, _, _ := strings.Cut(n, "__")
			if server == "" {
				server = s
			} else if s != server {
				return "", false
			}
		}
	}
	return server, server != ""
}

// legTools collects, in sorted order, the qualified names that fill one leg, and
// whether any of them runs without asking.
type legTools struct {
	names []string
	// unasked are the names that run without asking, sorted (a subset of names).
	unasked []string
	allowed bool
	// rules are the allow rules that let a tool of this leg run unasked where its
	// tier's policy asks ("SERVER__TOOL: rule NAME").
	rules []string
	order []string // ordered's result, once made
}

// eachLeg calls f with the list c puts its tool on, for each: 0 untrusted content, 1
// private data, 2 exfiltration (its legs), 3 destructive (its tier), 4 a write to a
// persistent store.
func eachLeg(c *Classification, f func(list int)) {
	for _, l := range c.Legs {
		switch l {
		case LegUntrustedContent:
			f(0)
		case LegPrivateData:
			f(1)
		case LegExfiltration:
			f(2)
		}
	}
	if c.Tier == TierDestructive {
		f(3)
	}
	if c.Persistent {
		f(4)
	}
}

// add appends q, which sorts after or equal to every name already added.
func (l *legTools) add(q string, allowed bool, rule string) {
	if n := len(l.names); n == 0 || l.names[n-1] != q {
		l.names = append(l.names, q)
	}
	if n := len(l.unasked); allowed && (n == 0 || l.unasked[n-1] != q) {
		l.unasked = append(l.unasked, q)
	}
	l.allowed = l.allowed || allowed
	if rule != "" && !slices.Contains(l.rules, rule) {
		l.rules = append(l.rules, rule)
	}
}

// ordered is the leg as a hazard lists it: the names that run unasked first, then
// the others, each part sorted. It is names itself when either part is empty (the
// common case costs nothing); else a new slice, computed once per leg and shared by
// the hazards that list the leg (read-only, see Hazard).
func (l *legTools) ordered() []string {
	if len(l.unasked) == 0 || len(l.unasked) == len(l.names) {
		return l.names
	}
	if l.order != nil {
		return l.order
	}
	out := make([]string, 0, len(l.names))
	out = append(out, l.unasked...)
	k := 0
	for _, n := range l.names {
		if k < len(l.unasked) && l.unasked[k] == n {
			k++
			continue
		}
		out = append(out, n)
	}
	l.order = out
	return out
}

// example names one tool of the leg for a summary, and how many others it holds: one
// that runs unasked when the leg has one (the member that makes the hazard
// unguarded), preferring one that fills none of the other legs given (see pick).
func (l *legTools) example(others ...[]string) string {
	p := ""
	if len(l.unasked) > 0 {
		p = pick(l.unasked, others...)
	} else {
		p = pick(l.names, others...)
	}
	p = LegName(p)
	if len(l.names) == 1 {
		return p
	}
	return p + " (+" + strconv.Itoa(len(l.names)-1) + ")"
}

// untrustedServerSummary is the sentence of the untrusted-server hazard of server,
// whose untrusted content is uc and whose tools that act on it are ex and de; when
// unguarded it names one member that runs unasked.
func untrustedServerSummary(server string, uc, ex, de legTools) string {
	s := "server " + server + " is untrusted: " + CountMembers(uc.names) +
		" can return content it controls, and only its own tools can act on it"
	if len(uc.unasked) > 0 && (ex.allowed || de.allowed) {
		n := len(uc.unasked)
		s += "; " + LegName(uc.unasked[0])
		if n > 1 {
			s += " (+" + strconv.Itoa(n-1) + ")"
			return s + " run without asking"
		}
		return s + " runs without asking"
	}
	return s
}

// unaskedOf merges the legs' unasked names, sorted without repeats (a leg's own list
// when the others add none, shared read-only like the legs).
func unaskedOf(legs ...*legTools) []string {
	var out []string
	for _, l := range legs {
		switch {
		case len(l.unasked) == 0:
		case out == nil:
			out = slices.Clip(l.unasked)
		default:
			m := make([]string, 0, len(out)+len(l.unasked))
			m = append(append(m, out...), l.unasked...)
			slices.Sort(m)
			out = slices.Clip(slices.Compact(m))
		}
	}
	return out
}

// ruleNames lists the allow rules that leave an unguarded hazard's legs unguarded.
func ruleNames(unguarded bool, legs ...legTools) []string {
	if !unguarded {
		return nil
	}
	var out []string
	for _, l := range legs {
		for _, r := range l.rules {
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// example names one tool of a sorted leg and how many others it holds. It prefers the
// first tool that fills none of the other legs given, so that a summary names three
// different tools where it can ("web__fetch_url reads untrusted content") rather than
// one tool three times.
//
// names and each of others are sorted without repeats, so one walk finds it: the place
// in each other leg only moves forward, by a galloping search from where it was (a leg
// whose tools are mostly in the others, common when servers fill several legs, costs
// about one comparison per tool rather than a binary search each).
func example(names []string, others ...[]string) string {
	p := pick(names, others...)
	if len(names) == 1 {
		return p
	}
	return p + " (+" + strconv.Itoa(len(names)-1) + ")"
}

// pick is the name example shows: the first of names that fills none of others, else
// the first.
func pick(names []string, others ...[]string) string {
	pick := names[0]
	var at [3]int // where the walk is in each other leg (at most three are given)
	pos := at[:0]
	if len(others) > len(at) {
		pos = make([]int, 0, len(others))
	}
	pos = pos[:len(others)]
find:
	for _, n := range names {
		for k, o := range others {
			pos[k] = lowerBound(o, pos[k], n)
			if pos[k] < len(o) && o[pos[k]] == n {
				continue find
			}
		}
		pick = n
		break
	}
	return pick
}

// lowerBound returns the first index i >= from of sorted o with o[i] >= n (len(o)
// when none), given that every element before from is below n: it gallops forward
// from from, then searches the last step.
func lowerBound(o []string, from int, n string) int {
	lo, hi, step := from, from, 1
	for hi < len(o) && o[hi] < n {
		lo = hi + 1
		hi += step
		step *= 2
	}
	hi = min(hi, len(o))
	i, _ := slices.BinarySearch(o[lo:hi], n)
	return lo + i
}

// pairHazard is the high hazard of kind where untrusted content (uc) reaches the
// tools of another leg, named leg in the hazard, which does what does says;
// unguarded when a tool of each leg runs unasked.
func pairHazard(kind HazardKind, uc, other *legTools, leg, does string) Hazard {
	unguarded := uc.allowed && other.allowed
	return Hazard{
		Kind:      kind,
		Severity:  SeverityHigh,
		Unguarded: unguarded,
		Rules:     ruleNames(unguarded, *uc, *other),
		Unasked:   unaskedOf(uc, other),
		Legs: map[string][]string{
			string(LegUntrustedContent): uc.ordered(),
			leg:                         other.ordered(),
		},
		Summary: pairSummary(uc, other, does),
	}
}

func pairSummary(untrusted, other *legTools, does string) string {
	if slices.Equal(untrusted.names, other.names) {
		// One set of tools on both sides (an untrusted server's): one example.
		return untrusted.example() + " reads untrusted content and " + does
	}
	return untrusted.example(other.names) + " reads untrusted content and " + other.example(untrusted.names) + " " + does
}

// shadowing finds the tools whose text names another server's tool. Tool names go
// into one map keyed by the lower-case name (name -> first index, with a chain through
// next for the other tools of that name), built once; each tool's normalised text is
// then scanned once, and a token costs one map lookup (a token of letters only, none
// when no distinctive name is letters only). live is sorted by qualified name, so the
// hazards come out in that order.
func newShadowIndex(tools []Assessed, live []int) *shadowIndex {
	ix := &shadowIndex{
		head:  make(map[string]int, len(live)),
		next:  make([]int, len(tools)),
		named: make([]bool, len(tools)), // the tool's name is distinctive
		rank:  make([]int, len(tools)),  // rank[i]: the place of live tool i in live
		byRef: &refIndex{tools: tools, live: live},
	}
	for _, i := range live {
		name := tools[i].Ref.Tool
		key := strings.ToLower(name)
		if j, ok := ix.head[key]; ok {
			ix.next[i] = j
		} else {
			ix.next[i] = -1
		}
		ix.head[key] = i
		ix.named[i] = distinctive(name)
		if ix.named[i] && lettersOnly(name) {
			ix.letterNames = true
		}
		if name != "" && (trimmable(name[0]) || trimmable(name[len(name)-1])) {
			ix.oddNames = true
		}
	}
	for r, i := range live {
		ix.rank[i] = r
	}
	return ix
}

// shadowIndex is what the scan looks names up in: it depends only on the live tools'
// refs, so a toolset whose tools only changed texts or fingerprints keeps it.
type shadowIndex struct {
	head  map[string]int // lower-cased tool name -> the last live tool of that name
	next  []int          // -> the previous live tool of that name, -1 at the end
	named []bool
	rank  []int
	byRef *refIndex
	// oddNames: some name starts or ends with '.' or '-', so a token must also be
	// looked up untrimmed. letterNames: some distinctive name is letters only
	// (sendEmail), so a token of letters only may name it in another case.
	oddNames, letterNames bool
}

// scanner is a scan of tools' texts against ix; with mentions, each read also
// returns the name chains the text looked up.
func (ix *shadowIndex) scanner(tools []Assessed, mentions bool) *shadowScan {
	return &shadowScan{tools: tools, head: ix.head, next: ix.next, named: ix.named,
		byRef: ix.byRef.on(tools), ix: ix, keepMentions: mentions}
}

// read scans live tool i's text; hits is nil when it names no other server's tool,
// else the tools it names, and h the shadowing hazard (Unguarded unset).
func (sc *shadowScan) read(i int, qualified []string) (h Hazard, hits []int, mentions []int32) {
	tools, ix := sc.tools, sc.ix
	sc.own = tools[i].Ref.Server
	sc.hits = sc.hits[:0]
	sc.mentions = sc.mentions[:0]
	text := tools[i].Text
	if text == "" {
		text = tools[i].Description
	}
	text = NormalizeText(text)
	for pos := 0; pos < len(text); {
		if nameClass[text[pos]] == classOther {
			pos++
			continue
		}
		start := pos
		letters, dotDash := true, false
	scan:
		for ; pos < len(text); pos++ {
			switch nameClass[text[pos]] {
			case classLower, classUpper:
			case classDigit:
				letters = false
			case classDotDash:
				letters, dotDash = false, true
			default:
				break scan
			}
		}
		if letters && !ix.letterNames {
			continue // a plain word: no distinctive name it could be
		}
		tok := text[start:pos]
		trimmed := tok
		if dotDash {
			for len(trimmed) > 0 && trimmable(trimmed[0]) {
				trimmed = trimmed[1:]
			}
			for len(trimmed) > 0 && trimmable(trimmed[len(trimmed)-1]) {
				trimmed = trimmed[:len(trimmed)-1]
			}
		}
		sc.lookup(trimmed)
		if ix.oddNames && trimmed != tok {
			sc.lookup(tok)
		}
	}
	if sc.keepMentions && len(sc.mentions) > 0 {
		slices.Sort(sc.mentions)
		mentions = slices.Clip(slices.Compact(slices.Clone(sc.mentions)))
	}
	if len(sc.hits) == 0 {
		return Hazard{}, nil, mentions
	}
	// live is sorted by qualified name, so ordering the hits by their place in it
	// (an int) orders their names: no string comparisons.
	rank := ix.rank
	slices.SortFunc(sc.hits, func(a, b int) int { return rank[a] - rank[b] })
	sc.hits = slices.Compact(sc.hits) // a name written twice is one hit
	shadowed := make([]string, 0, len(sc.hits))
	for _, j := range sc.hits {
		if n := len(shadowed); n == 0 || shadowed[n-1] != qualified[j] {
			shadowed = append(shadowed, qualified[j])
		}
	}
	where := "'s description names"
	if tools[i].Text != "" {
		where = "'s text (description, titles or schemas) names"
	}
	h = Hazard{
		Kind:     HazardShadowing,
		Severity: SeverityHigh,
		Legs: map[string][]string{
			HazardLegShadowing: {qualified[i]},
			HazardLegShadowed:  slices.Clip(shadowed), // shared, read-only: see Hazard
		},
		Summary: qualified[i] + where + " another server's tool " + example(shadowed),
	}
	return h, slices.Clone(sc.hits), mentions
}

func lettersOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := nameClass[s[i]]; c != classLower && c != classUpper {
			return false
		}
	}
	return true
}

// shadowScan is the state of one tool's text scan.
type shadowScan struct {
	tools []Assessed
	head  map[string]int
	next  []int
	named []bool
	byRef *refIndex
	ix    *shadowIndex
	own   string // the server of the tool whose text is read
	hits  []int
	// mentions: the chains (heads) lookup found a name in, when keepMentions.
	mentions     []int32
	keepMentions bool
	buf          []byte
	ownFP        []string // lookup's scratch: fingerprints of own's tools of the name
	cand         []int    // lookup's scratch: other servers' tools of the name
}

// lookup appends to hits the tools of servers other than own that tok names, case
// folded: a distinctive bare name, or SERVER__TOOL. A bare name that own also lists
// names own's tool (two instances of one program describe each other's tools by
// name) unless another server's tool of that name has a different definition: then
// own's tool of that name may be a decoy, and the other tool counts as named.
func (sc *shadowScan) lookup(tok string) {
	sc.buf = append(sc.buf[:0], tok...)
	lower := sc.buf
	for k, c := range lower {
		if 'A' <= c && c <= 'Z' {
			lower[k] = c + ('a' - 'A')
		}
	}
	tools, next := sc.tools, sc.next
	if first, ok := sc.head[string(lower)]; ok {
		if sc.keepMentions {
			sc.mentions = append(sc.mentions, int32(first))
		}
		// One walk of the chain sorts own's tools of this name from the others, so a
		// name that many servers list costs linear time, not a pair per two tools.
		sc.ownFP, sc.cand = sc.ownFP[:0], sc.cand[:0]
		for j := first; j >= 0; j = next[j] {
			if strings.EqualFold(tools[j].Ref.Server, sc.own) {
				sc.ownFP = append(sc.ownFP, tools[j].Fingerprint)
			} else if sc.named[j] {
				sc.cand = append(sc.cand, j)
			}
		}
		for _, j := range sc.cand {
			if !slices.Contains(sc.ownFP, tools[j].Fingerprint) { // else the same program twice
				sc.hits = append(sc.hits, j)
			}
		}
	}
	// Server names cannot contain "__", so the first "__" ends the server part; the
	// tool part may itself hold "__".
	if k := strings.Index(string(lower), "__"); k >= 0 {
		server, name := string(lower[:k]), string(lower[k+2:])
		if server == strings.ToLower(sc.own) {
			return
		}
		if j, ok := sc.head[name]; ok {
			if next[j] < 0 {
				if strings.EqualFold(tools[j].Ref.Server, server) {
					sc.hits = append(sc.hits, j)
				}
			} else if j, ok := sc.byRef.get()[Ref{Server: server, Tool: name}]; ok {
				sc.hits = append(sc.hits, j)
			}
		}
	}
}

func trimmable(c byte) bool { return c == '.' || c == '-' }

// The classes of the bytes a tool name may hold, for the description scan: one table
// lookup per byte instead of a chain of comparisons (the scan reads every byte of every
// description, so it is most of Hazards' time).
const (
	classOther   uint8 = iota // ends a token
	classLower                // a-z
	classUpper                // A-Z
	classDigit                // 0-9 and '_'
	classDotDash              // '.' and '-'
)

// nameClass is a constant table, built once; nothing writes it after init.
var nameClass = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = classLower
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = classUpper
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = classDigit
	}
	t['_'] = classDigit
	t['.'], t['-'] = classDotDash, classDotDash
	return t
}()

// refIndex maps a live tool's Ref, lower-cased, to its index, built on first use:
// only names that several servers share need it, and most toolsets have few.
type refIndex struct {
	tools []Assessed
	live  []int
	m     map[Ref]int
}

// on is r over tools, the same tools by ref: the map, when built, is shared (it is
// never changed once built); when r is already over tools, r itself.
func (r *refIndex) on(tools []Assessed) *refIndex {
	if len(r.tools) > 0 && len(tools) > 0 && &r.tools[0] == &tools[0] {
		return r
	}
	return &refIndex{tools: tools, live: r.live, m: r.m}
}

func (r *refIndex) get() map[Ref]int {
	if r.m == nil {
		r.m = make(map[Ref]int, len(r.live))
		for _, i := range r.live {
			ref := Ref{Server: strings.ToLower(r.tools[i].Ref.Server), Tool: strings.ToLower(r.tools[i].Ref.Tool)}
			if _, dup := r.m[ref]; !dup {
				r.m[ref] = i
			}
		}
	}
	return r.m
}

// distinctive reports whether a bare word is unlikely to be plain English, and so is
// taken as naming a tool: it holds '_', '-', '.', a digit, or a lower-to-upper change.
func distinctive(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || c == '-' || c == '.' || '0' <= c && c <= '9':
			return true
		case i > 0 && 'A' <= c && c <= 'Z' && 'a' <= s[i-1] && s[i-1] <= 'z':
			return true
		}
	}
	return false
}
