package trust

import (
	"slices"
	"strconv"
	"time"
)

// The four hints are handled as an array indexed by these, in the order the spec
// lists them, so that the trust rule is written once.
const (
	hintReadOnly = iota
	hintDestructive
	hintIdempotent
	hintOpenWorld
	hintCount
)

// source says where a hint's effective value came from.
type source uint8

const (
	fromDefault source = iota
	fromAsserted
	fromServer
)

// hintWire is the hint's name in MCP annotations.
func hintWire(i int) string {
	switch i {
	case hintReadOnly:
		return "readOnlyHint"
	case hintDestructive:
		return "destructiveHint"
	case hintIdempotent:
		return "idempotentHint"
	}
	return "openWorldHint"
}

// hintConfig is the hint's key in airlock's config ([servers.X.tools.Y]).
func hintConfig(i int) string {
	switch i {
	case hintReadOnly:
		return "read_only"
	case hintDestructive:
		return "destructive"
	case hintIdempotent:
		return "idempotent"
	}
	return "open_world"
}

// specDefault is the value the MCP spec gives a hint that is absent.
func specDefault(i int) bool { return i == hintDestructive || i == hintOpenWorld }

func (h Hints) array() [hintCount]*bool {
	return [hintCount]*bool{h.ReadOnly, h.Destructive, h.Idempotent, h.OpenWorld}
}

// TierOf returns the tier the effective hints give, before anything can block the
// tool: read when read-only, write when neither read-only nor destructive, and
// destructive otherwise. It never returns TierBlocked.
func TierOf(e Effective) Tier {
	switch {
	case e.ReadOnly:
		return TierRead
	case !e.Destructive:
		return TierWrite
	}
	return TierDestructive
}

// For returns the action the policy gives tier t. An unset (or unknown) action falls
// back to DefaultPolicy's for that tier, and TierBlocked is always Deny.
func (p Policy) For(t Tier) Action {
	d := DefaultPolicy()
	pick := func(a, def Action) Action {
		if known(a) {
			return a
		}
		return def
	}
	switch t {
	case TierRead:
		return pick(p.Read, d.Read)
	case TierWrite:
		return pick(p.Write, d.Write)
	case TierDestructive:
		return pick(p.Destructive, d.Destructive)
	}
	return Deny
}

// known reports whether a is one of Allow, Ask, Deny. Any other value is "no opinion",
// so a corrupted or future value never silently becomes Allow.
func known(a Action) bool { return a == Allow || a == Ask || a == Deny }

// legMask is a set of legs, bit i for Legs[i].
type legMask uint8

func (m legMask) has(l Leg) bool { return m&maskOf(l) != 0 }

func maskOf(l Leg) legMask {
	for i, x := range Legs {
		if x == l {
			return 1 << i
		}
	}
	return 0
}

func labelMask(labels []Leg) legMask {
	var m legMask
	for _, l := range labels {
		m |= maskOf(l)
	}
	return m
}

// legs lists the set in the order of Legs; nil when empty. The slice is one of
// legSets, shared by every classification with the same legs (10,000 tools made
// 10,000 copies of a handful of lists): read-only, and full, so that an append
// copies it.
func (m legMask) legs() []Leg {
	return legSets[m&(1<<len(Legs)-1)]
}

// legSets holds every set of legs as legs returns it.
var legSets = func() (sets [1 << len(Legs)][]Leg) {
	for m := 1; m < len(sets); m++ {
		var out []Leg
		for i, l := range Legs {
			if m&(1<<i) != 0 {
				out = append(out, l)
			}
		}
		sets[m] = slices.Clip(out)
	}
	return sets
}()

// words joins the set's legs with ", " in the order of Legs. The sentences are
// constants so that classifying costs no allocation for them.
func (m legMask) words() string {
	switch m & 7 {
	case 1:
		return "untrusted-content"
	case 2:
		return "private-data"
	case 3:
		return "untrusted-content, private-data"
	case 4:
		return "exfiltration"
	case 5:
		return "untrusted-content, exfiltration"
	case 6:
		return "private-data, exfiltration"
	case 7:
		return "untrusted-content, private-data, exfiltration"
	}
	return ""
}

// Classify decides one tool's tier, effective hints, legs and policy action
// (docs/design.md), with a reason sentence for every step that mattered.
//
// Each effective hint is, first match wins: the person's assertion (t.Asserted), the
// server's declaration if the server is Trusted, the spec default (read-only false,
// destructive true, idempotent false, open world true). An untrusted or blocked
// server's declarations are therefore never believed.
//
// The tool is TierBlocked, with Action Deny, when its server is blocked, its tool policy
// is Deny, its definition changed since pinned (PinChanged), its server's instructions
// changed, its name has a problem, or the person disabled it; the pin reason gives
// PinnedAt's date in PinnedAt's own location. Effective and Legs are
// still filled for a blocked tool, because the UI shows them. Otherwise the action is
// the tool policy when set, else p.For(tier).
//
// Legs are untrusted-content (effective open world, or labelled), exfiltration
// (effective open world and not read-only, or labelled) and private-data (labelled
// only), in the order of Legs; nil when none. Labels from the server and the tool are
// merged; a label that is not a Leg is ignored. An applied fence with no network
// (t.Fence.NoNetwork) removes the exfiltration that open world gives, and for a
// trusted server its untrusted content too; labels stay (docs/hazards.md).
//
// Reasons come in a fixed order: every blocking cause first (in the order above), then
// the hint sentences (assertions, what the server's trust did to its declarations,
// which spec defaults applied), then labels, then the fence, then, for a tool that is not blocked, the
// tier's policy and any tool policy. The same input always gives the same sentences.
func Classify(t Tool, p Policy) Classification {
	trusted := t.ServerTrust == Trusted
	eff, src := effective(t)
	e := Effective{
		ReadOnly:    eff[hintReadOnly],
		Destructive: eff[hintDestructive],
		Idempotent:  eff[hintIdempotent],
		OpenWorld:   eff[hintOpenWorld],
	}
	tier := TierOf(e)
	tierAction := p.For(tier)

	serverLabels, toolLabels := labelMask(t.ServerLabels), labelMask(t.ToolLabels)
	labels := serverLabels | toolLabels
	// A fence with no network takes away what the open world meant through the
	// server's own network (fencerisk.go): the exfiltration, and a trusted
	// server's untrusted content.
	noNet := t.Fence.NoNetwork()
	var legs legMask
	if (e.OpenWorld && !(noNet && trusted)) || labels.has(LegUntrustedContent) {
		legs |= maskOf(LegUntrustedContent)
	}
	if labels.has(LegPrivateData) {
		legs |= maskOf(LegPrivateData)
	}
	if (e.OpenWorld && !e.ReadOnly && !noNet) || labels.has(LegExfiltration) {
		legs |= maskOf(LegExfiltration)
	}

	reasons := make([]string, 0, 4)
	blocked := false
	block := func(s string) {
		reasons = append(reasons, s)
		blocked = true
	}
	toolPolicy := t.ToolPolicy
	if !known(toolPolicy) {
		toolPolicy = ActionUnset
	}
	if t.ServerTrust == BlockedServer {
		block("server " + t.Server + " is blocked in the trust list")
	}
	if toolPolicy == Deny {
		block(toolPolicySentence(toolPolicy, tierAction))
	}
	if t.Pin == PinChanged {
		if t.PinnedAt.IsZero() {
			block("definition changed since pinned; review it before use")
		} else {
			block("definition changed since pinned on " + t.PinnedAt.Format(time.DateOnly) + "; review it before use")
		}
	}
	if t.InstructionsChanged {
		block("server " + t.Server + "'s instructions changed since pinned; review before use")
	}
	if t.NameProblem != "" {
		block(t.NameProblem)
	}
	if t.Disabled {
		block("disabled for this session")
	}

	reasons = appendHintReasons(reasons, t, t.Declared.Hints.array(), src, eff)

	if serverLabels != 0 {
		reasons = append(reasons, "server "+t.Server+" is labelled "+serverLabels.words())
	}
	if toolLabels != 0 {
		reasons = append(reasons, "you labelled this tool "+toolLabels.words())
	}
	persistent := !e.ReadOnly && (slices.Contains(t.ServerLabels, LegPersistent) || slices.Contains(t.ToolLabels, LegPersistent))
	if persistent {
		reasons = append(reasons, persistentSentence)
	}
	if r := fenceReason(t.Fence, t.ServerTrust); r != "" {
		reasons = append(reasons, r)
	}

	c := Classification{Tier: tier, Effective: e, Legs: legs.legs(), Action: tierAction, Persistent: persistent}
	if blocked {
		c.Tier, c.Action = TierBlocked, Deny
	} else {
		reasons = append(reasons, tierSentence(tier, tierAction))
		if toolPolicy != ActionUnset {
			reasons = append(reasons, toolPolicySentence(toolPolicy, tierAction))
			c.Action = toolPolicy
		}
	}
	c.Reasons = reasons
	return c
}

// persistentSentence is the reason of a write to a store labelled persistent.
const persistentSentence = "labelled persistent and not read-only: what it writes outlives this context"

func toolPolicySentence(tool, tier Action) string {
	if tool == tier {
		return "tool policy " + tool.String() + " is the same as the tier's"
	}
	return "tool policy " + tool.String() + " overrides the tier's " + tier.String()
}

// tierSentence is "tier write: policy ask" and the like, as a constant.
func tierSentence(t Tier, a Action) string {
	switch t {
	case TierRead:
		switch a {
		case Allow:
			return "tier read: policy allow"
		case Ask:
			return "tier read: policy ask"
		case Deny:
			return "tier read: policy deny"
		}
	case TierWrite:
		switch a {
		case Allow:
			return "tier write: policy allow"
		case Ask:
			return "tier write: policy ask"
		case Deny:
			return "tier write: policy deny"
		}
	case TierDestructive:
		switch a {
		case Allow:
			return "tier destructive: policy allow"
		case Ask:
			return "tier destructive: policy ask"
		case Deny:
			return "tier destructive: policy deny"
		}
	}
	return "tier " + t.String() + ": policy " + a.String()
}

// appendHintReasons explains where each effective hint came from. Idempotent never
// decides anything, so a defaulted idempotentHint is not mentioned; a declared one is,
// because "ignored" or "believed" is said of every hint the server actually sent.
//
// Classify runs for every tool on every refresh, so each sentence is built in one
// buffer and converted to a string once.
func appendHintReasons(reasons []string, t Tool, declared [hintCount]*bool, src [hintCount]source, eff [hintCount]bool) []string {
	var buf [256]byte

	// What the person asserted.
	b := buf[:0]
	for i := range hintCount {
		if src[i] != fromAsserted {
			continue
		}
		if len(b) == 0 {
			b = append(b, "you asserted "...)
		} else {
			b = append(b, ", "...)
		}
		b = append(b, hintConfig(i)...)
		b = append(b, '=')
		b = strconv.AppendBool(b, eff[i])
	}
	if len(b) > 0 {
		b = append(b, " for this tool"...)
		reasons = append(reasons, string(b))
	}

	// Which spec defaults applied, counting only hints that decide the tier or a leg:
	// "destructive" already implies "not read-only", and whether a read-only tool
	// would be destructive does not matter.
	destructiveDefault := src[hintDestructive] == fromDefault && !eff[hintReadOnly]
	readOnlyDefault := src[hintReadOnly] == fromDefault && !destructiveDefault
	openWorldDefault := src[hintOpenWorld] == fromDefault
	clause := defaultsClause(readOnlyDefault, destructiveDefault, openWorldDefault)

	anyDeclared := false
	for _, d := range declared {
		anyDeclared = anyDeclared || d != nil
	}
	b = append(append(buf[:0], "server "...), t.Server...)
	switch {
	case t.Declared.Raw == nil:
		if clause != "" {
			b = append(b, " declared no annotations: "...)
			reasons = append(reasons, string(append(b, clause...)))
		}
	case !anyDeclared:
		if clause != "" {
			b = append(b, " declared no hints: "...)
			reasons = append(reasons, string(append(b, clause...)))
		}
	case t.ServerTrust == Trusted:
		prefix := len(b)
		if n := countDeclared(declared, src, fromServer, -1); n > 0 {
			b = append(b, " is trusted: its "...)
			b = appendHintList(b, declared, src, fromServer, -1)
			reasons = append(reasons, string(append(b, " believed"...)))
		}
		if clause != "" {
			b = append(b[:prefix], " declared no "...)
			sep := false
			for i, on := range [...]bool{readOnlyDefault, destructiveDefault, false, openWorldDefault} {
				if on {
					if sep {
						b = append(b, ", "...)
					}
					b, sep = append(b, hintWire(i)...), true
				}
			}
			b = append(b, ": "...)
			reasons = append(reasons, string(append(b, clause...)))
		}
	default:
		// Not trusted: every declared hint that no assertion replaced is ignored.
		b = append(b, " is "...)
		b = append(b, t.ServerTrust.String()...)
		b = append(b, ": "...)
		prefix := len(b)
		skip := -1
		if declared[hintReadOnly] != nil && *declared[hintReadOnly] && src[hintReadOnly] != fromAsserted {
			b = append(b, "it claims read-only (readOnlyHint=true), which is ignored"...)
			skip = hintReadOnly
		}
		if countDeclared(declared, src, fromDefault, skip) > 0 {
			if len(b) > prefix {
				b = append(b, "; "...)
			}
			b = append(b, "its "...)
			b = appendHintList(b, declared, src, fromDefault, skip)
			b = append(b, " ignored"...)
		}
		if clause != "" {
			if len(b) > prefix {
				b = append(b, "; "...)
			}
			b = append(b, clause...)
		}
		if len(b) > prefix {
			reasons = append(reasons, string(b))
		}
	}
	return reasons
}

// defaultsClause names the spec defaults that applied, as a constant.
func defaultsClause(readOnly, destructive, openWorld bool) string {
	switch {
	case destructive && openWorld:
		return "spec defaults apply (destructive, open world)"
	case readOnly && openWorld:
		return "spec defaults apply (not read-only, open world)"
	case destructive:
		return "spec default applies (destructive)"
	case readOnly:
		return "spec default applies (not read-only)"
	case openWorld:
		return "spec default applies (open world)"
	}
	return ""
}

// countDeclared counts the declared hints whose effective value came from want,
// skipping index skip.
func countDeclared(declared [hintCount]*bool, src [hintCount]source, want source, skip int) int {
	n := 0
	for i := range hintCount {
		if i != skip && declared[i] != nil && src[i] == want {
			n++
		}
	}
	return n
}

// appendHintList appends the declared hints whose effective value came from want, as
// "readOnlyHint=true, openWorldHint=false are" (or "... is" for one), skipping index
// skip.
func appendHintList(b []byte, declared [hintCount]*bool, src [hintCount]source, want source, skip int) []byte {
	n := 0
	for i := range hintCount {
		if i == skip || declared[i] == nil || src[i] != want {
			continue
		}
		if n > 0 {
			b = append(b, ", "...)
		}
		b = append(b, hintWire(i)...)
		b = append(b, '=')
		b = strconv.AppendBool(b, *declared[i])
		n++
	}
	if n == 1 {
		return append(b, " is"...)
	}
	return append(b, " are"...)
}
