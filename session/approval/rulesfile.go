package approval

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/big"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/airlock-mcp/airlock/internal/model"

	"github.com/BurntSushi/toml"

	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/internal/testhooks"
	"github.com/airlock-mcp/airlock/session/statefile"
	"github.com/airlock-mcp/airlock/trust"
)

// RulesFile is the name of the remembered-decisions file in the config folder.
const RulesFile = "rules.toml"

// RulesPath is where a config's remembered decisions live: the config's rules_file,
// else rules.toml beside the config file, else in the default config folder.
func RulesPath(cfg *config.Config) (string, error) {
	if cfg.RulesFile != "" {
		return cfg.RulesFile, nil
	}
	if cfg.Path != "" {
		return filepath.Join(filepath.Dir(cfg.Path), RulesFile), nil
	}
	p, err := config.DefaultPath()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(p), RulesFile), nil
}

// SavedRule is one remembered decision as rules.toml keeps it.
type SavedRule struct {
	ID     string                    `toml:"id"`
	Server string                    `toml:"server"`
	Tool   string                    `toml:"tool"`
	When   map[string]map[string]any `toml:"when"`
	Policy string                    `toml:"policy"`
	Reason string                    `toml:"reason,omitempty"`
	// From says where it came from ("the dialog, call c-7 in context you").
	From    string    `toml:"from"`
	Created time.Time `toml:"created"`
}

// Ref is the tool the rule is for.
func (r SavedRule) Ref() trust.Ref { return trust.Ref{Server: r.Server, Tool: r.Tool} }

type rulesDoc struct {
	Version int `toml:"version"`
	// Count is how many rules airlock wrote: a file cut at a table's end still
	// parses, and only the count says rules are missing. A file without it (written
	// by hand) is not checked.
	Count *int        `toml:"count"`
	Rules []SavedRule `toml:"rules"`
}

// rulesStore is the rules file airlock owns: read at start and again whenever it
// changed on disk (another airlock saved or revoked a rule), written atomically and
// owner-only under a lock so that two processes never lose each other's rules.
type rulesStore struct {
	path string // "" keeps remembered rules in memory for this run
	home string

	mu     sync.Mutex
	last   statefile.Stamp // the file when saved was read from it; zero: read at the next look
	saved  []SavedRule
	byTool map[trust.Ref][]trust.Rule
	sets   map[trust.Ref]*trust.RuleSet
	err    error // the last load's error (the previous rules stay)
	// unreadable is why the file cannot be read now (nil: it can, or it is missing);
	// while it is set the tools a remembered rule could decide ask (problemFor).
	unreadable error
	// read says the file was read whole (or was missing) in this process; ruled
	// are the tools its rules were for then.
	read  bool
	ruled map[trust.Ref]bool
}

func newRulesStore(path, home string) *rulesStore {
	return &rulesStore{path: path, home: home, byTool: map[trust.Ref][]trust.Rule{}}
}

// compile turns saved rules into trust rules, named by ID, source "rules.toml". A
// rule that does not compile is kept as a broken one (trust.Rule.Broken) that
// matches nothing: fail closed, its tool asks for every call until it is fixed or
// revoked, since it may have been a deny.
func compileSaved(saved []SavedRule, home, source string) (map[trust.Ref][]trust.Rule, error) {
	out := map[trust.Ref][]trust.Rule{}
	var errs []error
	for _, s := range saved {
		r, err := compileOne(s, home, source)
		if err != nil {
			errs = append(errs, err)
			if s.Server != "" && s.Tool != "" {
				// Even without its id: a broken rule for a known tool may have been a
				// deny, so its tool asks rather than running as if it were not there.
				name := s.ID
				if name == "" {
					name = "(a rule without an id)"
				}
				out[s.Ref()] = append(out[s.Ref()], trust.Rule{Name: name, Source: source, Policy: trust.Ask, Broken: true,
					Reason: "it does not compile (" + err.Error() + "), so every call of this tool asks until it is fixed or revoked"})
			}
			continue
		}
		out[s.Ref()] = append(out[s.Ref()], r)
	}
	return out, errors.Join(errs...)
}

func compileOne(s SavedRule, home, source string) (trust.Rule, error) {
	if s.ID == "" || s.Server == "" || s.Tool == "" {
		return trust.Rule{}, fmt.Errorf("a remembered rule needs id, server and tool")
	}
	policy, ok := trust.ParseAction(s.Policy)
	if !ok {
		return trust.Rule{}, fmt.Errorf("rule %s: policy must be allow, ask or deny, not %q", s.ID, s.Policy)
	}
	var conds []trust.Cond
	for _, field := range slices.Sorted(maps.Keys(s.When)) {
		for _, kind := range slices.Sorted(maps.Keys(s.When[field])) {
			c, err := trust.NewCond(field, trust.MatcherKind(kind), s.When[field][kind], home)
			if err != nil {
				return trust.Rule{}, fmt.Errorf("rule %s: when.%s.%s: %w", s.ID, field, kind, err)
			}
			conds = append(conds, c)
		}
	}
	r, err := trust.NewRule(s.ID, policy, s.Reason, conds)
	if err != nil {
		return trust.Rule{}, fmt.Errorf("rule %s: %w", s.ID, err)
	}
	r.Source = source
	return r, nil
}

// reloadLocked reads the file when it changed since last read (identity, time, size
// or mode); s.mu is held. A file that cannot be read or is refused keeps only the deny
// and ask rules read before, and the tools a rule could decide ask (problemFor) until
// it can be read; a bad rule is left out; the error is kept for Rules(). A missing
// file is no rules.
func (s *rulesStore) reloadLocked() {
	if s.path == "" {
		return
	}
	if testhooks.RulesLook != nil {
		testhooks.RulesLook(s.path)
	}
	st, err := statefile.StampPath(s.path) // before the read: a change after it moves the stamp
	if errors.Is(err, fs.ErrNotExist) {
		if !s.last.IsZero() || s.saved != nil {
			s.saved, s.byTool, s.sets, s.last, s.err = nil, map[trust.Ref][]trust.Rule{}, nil, statefile.Stamp{}, nil
		}
		s.unreadable, s.read, s.ruled = nil, true, nil
		return
	}
	if err != nil {
		// Read again at the next look (s.last is cleared), so that a look that
		// fails once does not leave the file unreadable until it changes.
		s.last, s.err, s.unreadable = statefile.Stamp{}, err, err
		return
	}
	if s.last.Unchanged(st) {
		return
	}
	saved, err := readRulesFile(s.path)
	if err != nil {
		// A file airlock cannot read or trusts no more (others may write it, a
		// link): its allow rules stop applying; deny and ask rules read before stay.
		kept := map[trust.Ref][]trust.Rule{}
		for ref, rs := range s.byTool {
			for _, r := range rs {
				if r.Policy != trust.Allow {
					kept[ref] = append(kept[ref], r)
				}
			}
		}
		// The file is read again at the next look (s.last is cleared): a problem
		// that leaves its size and time alone (an owner changed back) ends too.
		s.byTool, s.sets, s.last, s.err, s.unreadable = kept, nil, statefile.Stamp{}, err, err
		return
	}
	byTool, err := compileSaved(saved, s.home, RulesFile)
	s.saved, s.byTool, s.sets, s.last, s.err = saved, byTool, nil, st, err
	s.unreadable, s.read, s.ruled = nil, true, map[trust.Ref]bool{}
	for _, r := range saved {
		s.ruled[r.Ref()] = true
	}
}

// problemFor says why the file cannot be read now when a remembered rule could
// decide ref's calls: a tool the rules were for when the file was last read whole in
// this process, or every tool when it never was. nil otherwise. It takes s.mu and
// does not look at the file again (forTool just did).
func (s *rulesStore) problemFor(ref trust.Ref) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unreadable == nil || s.read && !s.ruled[ref] {
		return nil
	}
	return s.unreadable
}

// problem is the file's reading problem as a sentence of what airlock does, nil when
// it can be read.
func (s *rulesStore) problem() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reloadLocked()
	if s.unreadable == nil {
		return nil
	}
	which := "every tool asks at every call (the file was not read in this process, so any tool may have a rule)"
	if s.read {
		which = fmt.Sprintf("every call of the %d tools its rules were for when last read asks", len(s.ruled))
	}
	return fmt.Errorf("%s cannot be read, so %s until it can: %s", s.path, which, unreadableReason(s.unreadable))
}

func readRulesFile(p string) ([]SavedRule, error) {
	b, err := statefile.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var doc rulesDoc
	md, err := toml.Decode(string(b), &doc)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	if doc.Version != 0 && doc.Version != 1 {
		return nil, fmt.Errorf("reading %s: version %d is newer than this airlock", p, doc.Version)
	}
	if !md.IsDefined("version") && len(doc.Rules) == 0 {
		// airlock writes version = 1 in every rules file, even one with no rule:
		// an empty file is a damaged one, never "no rules".
		return nil, fmt.Errorf("reading %s: it is empty or has no version (airlock writes version = 1 in every rules file)", p)
	}
	if doc.Count != nil && *doc.Count != len(doc.Rules) {
		return nil, fmt.Errorf("reading %s: it says it holds %d rules, the file has %d (cut short?)", p, *doc.Count, len(doc.Rules))
	}
	return doc.Rules, nil
}

func writeRulesFile(p string, saved []SavedRule) error {
	var b bytes.Buffer
	b.WriteString("# Remembered decisions, written by airlock (docs/rules.md). Revoke with\n# `airlock rules revoke ID`; airlock never writes your config.toml.\n")
	n := len(saved)
	if err := toml.NewEncoder(&b).Encode(rulesDoc{Version: 1, Count: &n, Rules: saved}); err != nil {
		return err
	}
	return statefile.WriteFile(p, b.Bytes())
}

// update changes the file under its lock: it reads what is there now (another
// process may have written), applies f and writes the result.
func (s *rulesStore) update(f func([]SavedRule) ([]SavedRule, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.path == "" {
		saved, err := f(slices.Clone(s.saved))
		if err != nil {
			return err
		}
		byTool, err := compileSaved(saved, s.home, RulesFile)
		if err != nil {
			return err
		}
		s.saved, s.byTool, s.sets = saved, byTool, nil
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	lf, err := statefile.OpenLock(s.path + ".lock")
	if err != nil {
		return err
	}
	defer lf.Close()
	if err := statefile.Lock(lf); err != nil {
		return err
	}
	defer func() { _ = statefile.Unlock(lf) }()
	cur, err := readRulesFile(s.path)
	if err != nil {
		return err
	}
	next, err := f(cur)
	if err != nil {
		return err
	}
	if _, err := compileSaved(next, s.home, RulesFile); err != nil {
		return err
	}
	if err := writeRulesFile(s.path, next); err != nil {
		return err
	}
	s.last = statefile.Stamp{}
	s.reloadLocked()
	return nil
}

// byToolNow returns every tool's remembered rules as the file stands now (looked at
// once): a listing's classification reads them for all its tools from this. The map
// is replaced, never changed, by later loads, so it may be read without the lock.
func (s *rulesStore) byToolNow() map[trust.Ref][]trust.Rule {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reloadLocked()
	return s.byTool
}

// forTool returns the remembered rules of one tool, compiled and as a list (nil when
// none), reloading the file if it changed.
func (s *rulesStore) forTool(ref trust.Ref) (*trust.RuleSet, []trust.Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reloadLocked()
	rules := s.byTool[ref]
	if len(rules) == 0 {
		return nil, nil
	}
	if s.sets == nil {
		s.sets = map[trust.Ref]*trust.RuleSet{}
	}
	set := s.sets[ref]
	if set == nil {
		set = trust.NewRuleSet(rules)
		s.sets[ref] = set
	}
	return set, rules
}

// RememberedRule is one line of the rules list: the saved rule, how often it decided
// a call in this process, and its sentence.
type RememberedRule struct {
	SavedRule
	Matched int
	// Problem is set when the rule does not compile (its tool asks for every call).
	Problem string
}

func newRuleID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "r-" + hex.EncodeToString(b[:])
}

// ProposeRule is the tightest rule that covers these arguments: a URL argument by its
// host, a path argument (absolute or ~, alone: not a command line) by the files of
// its directory, any other boolean, number or short one-line string by equals, a
// list by its length (max), and an object's members by their dotted paths; long
// text, an integer float64 cannot hold exactly, and a value holding something shaped
// like a secret (with a note) are left open (the person sees the proposal, and what
// it leaves open, and may tighten it).
//
// For a server on this machine, a path that opens elsewhere through a link is
// proposed by the folder it opens: an allow rule holds only where the path is inside
// its glob both as written and as opened, so the written folder would be set aside
// again at the next call. A note says so (and that the spelling through the link
// keeps asking), as it does for a path that cannot be resolved safely, which no
// allow rule lets run unasked.
func ProposeRule(tool model.ToolInfo, args []byte) model.RuleProposal {
	p := leaveSecretsOpen(proposeRuleFor(runtime.GOOS, tool, args))
	if tool.Facts == nil || !tool.Facts.Local {
		return p
	}
	obj, err := decodeObject(args)
	if err != nil {
		return p
	}
	home := homeDir()
	for _, field := range slices.Sorted(maps.Keys(p.When)) {
		if _, ok := p.When[field]["glob"]; !ok {
			continue
		}
		raw, ok := dotted(obj, field).(string)
		if !ok {
			continue
		}
		if glob, note := resolvedProposal(raw, home); note != "" {
			if glob != "" {
				p.When[field] = map[string]any{"glob": glob}
			}
			p.Notes = append(p.Notes, field+" "+note)
		}
	}
	return p
}

// resolvedProposal is the glob of the folder a path opens, when that differs from
// the folder it names, with a sentence saying why; glob is "" (keep the proposal)
// when the path cannot be resolved safely or its folder cannot be written as a glob,
// and note is "" when the path opens where it reads.
func resolvedProposal(raw, home string) (glob, note string) {
	clean, ok := trust.CleanPath(raw, home)
	if !ok {
		return "", ""
	}
	open := clean
	if runtime.GOOS != "windows" {
		// a POSIX kernel applies ".." after the link before it: walk the raw value
		open = raw
		if raw == "~" || strings.HasPrefix(raw, "~/") {
			open = home + raw[1:]
		}
	}
	rp := resolveOpen(open, home)
	shown := shortPath(raw, home)
	if rp.Path == "" {
		return "", "cannot be resolved safely, so no allow rule lets this call run unasked: " + shown + " (" + rp.Why + ")"
	}
	if rp.Path == clean {
		return "", ""
	}
	dir := path.Dir(rp.Path)
	opens := shown + " opens " + shortPath(rp.Path, home) + " (" + rp.Why + ")"
	if dir == rp.Path || strings.ContainsAny(dir, "*?[\\\x00") {
		return "", "is proposed by the folder it names, which this call keeps asking for: " + opens
	}
	if strings.HasPrefix(raw, "~") {
		dir = shortPath(dir, home)
	}
	glob = strings.TrimSuffix(dir, "/") + "/*"
	return glob, "is proposed by the folder it opens, " + shortPath(glob, home) + ": " + opens + "; a call that names it through the link asks again"
}

// dotted is the value at a dotted field of a decoded argument object (nil when
// absent).
func dotted(obj map[string]any, field string) any {
	var cur any = obj
	for _, k := range strings.Split(field, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

// proposeRuleFor is ProposeRule for the paths of operating system goos (a pure
// function of it: on Windows a drive path is proposed by its folder too).
func proposeRuleFor(goos string, tool model.ToolInfo, args []byte) model.RuleProposal {
	p := model.RuleProposal{Server: tool.Ref.Server, Tool: tool.Ref.Tool, When: map[string]map[string]any{}}
	obj, err := decodeObject(args)
	if err != nil {
		return p
	}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if strings.Contains(k, ".") || k == "" {
				continue
			}
			field := prefix + k
			switch x := m[k].(type) {
			case map[string]any:
				walk(field+".", x)
			case string:
				p.When[field] = proposeString(goos, x)
				if p.When[field] == nil {
					delete(p.When, field)
				}
			case bool:
				p.When[field] = map[string]any{"equals": x}
			case json.Number:
				if n, ok := proposedNumber(x); ok {
					p.When[field] = map[string]any{"equals": n}
				}
			case []any:
				// Its members are not compared one by one; how many there are is.
				p.When[field] = map[string]any{"max": int64(len(x))}
			}
		}
	}
	walk("", obj)
	return p
}

// proposeString is the tightest matcher for one string argument, or nil for a long
// text (left open).
func proposeString(goos, x string) map[string]any {
	short := len(x) <= 256 && !strings.ContainsAny(x, "\n\r")
	equals := map[string]any{"equals": x}
	switch {
	case isWebURL(x):
		if h, ok := trust.URLHost(x); ok {
			return map[string]any{"host": []any{h}}
		}
	case !pathAlone(x):
		// A command line or text that starts like a path: a folder rule would
		// also allow every other command of that folder's programs.
	case goos == "windows" && len(x) >= 3 && x[1] == ':' && (x[2] == '\\' || x[2] == '/'):
		if c, ok := trust.CleanPathFor(goos, x, ""); ok && !strings.ContainsAny(c, "*?[") {
			if dir := path.Dir(c); dir != c {
				return map[string]any{"glob": strings.TrimSuffix(dir, "/") + "/*"}
			}
		}
	case strings.HasPrefix(x, "/") || strings.HasPrefix(x, "~/"):
		c := path.Clean(x)
		if (strings.HasPrefix(c, "/") || strings.HasPrefix(c, "~/")) && c != "/" && !strings.ContainsAny(c, "*?[\\\x00") {
			return map[string]any{"glob": strings.TrimSuffix(path.Dir(c), "/") + "/*"}
		}
	}
	if short {
		return equals
	}
	return nil
}

// pathAlone reports whether x could be a path and nothing else: no whitespace and
// none of the characters a shell reads as the end of a command or an expansion.
func pathAlone(x string) bool {
	return !strings.ContainsFunc(x, unicode.IsSpace) && !strings.ContainsAny(x, ";|&$`<>'\"")
}

// isWebURL reports whether x is written as a web URL: http, https, ws or wss (any
// case), then "://". A text that only holds a URL somewhere, or a name a URL reader
// would take as a host, is not proposed by its host: a host rule would also allow
// every other value read as a URL on that host.
func isWebURL(x string) bool {
	scheme, rest, ok := strings.Cut(x, "://")
	if !ok || strings.ContainsAny(rest, " \t\r\n") {
		return false
	}
	switch strings.ToLower(scheme) {
	case "http", "https", "ws", "wss":
		return true
	}
	return false
}

func decodeObject(args []byte) (map[string]any, error) {
	var m map[string]any
	if len(bytes.TrimSpace(args)) == 0 {
		return map[string]any{}, nil
	}
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber() // numbers as written: proposedNumber keeps them exact
	err := d.Decode(&m)
	return m, err
}

// proposedNumber is a call's number as an equals operand that holds it exactly: an
// int64 for integer text, a float64 where it is exactly the decimal written (0.1,
// 2.5); false for any other (a rule rounded through float64 would match another
// number, or never this one again), which is left open.
func proposedNumber(n json.Number) (any, bool) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i, true
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || len(n) > 512 { // beyond float64, or too long to read exactly
		return nil, false
	}
	want, ok1 := new(big.Rat).SetString(string(n))
	got, ok2 := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok1 || !ok2 || want.Cmp(got) != 0 {
		return nil, false
	}
	return f, true
}

// RememberRule saves a remembered decision for tool: the proposal's conditions with
// policy (allow or deny), audited (kind rule-saved). An allow rule is refused for a
// destructive tool (every destructive call keeps its question, as with grants), and
// a proposal for another tool is refused; so is a condition the tool's schema cannot
// satisfy (CheckProposal), and one whose conditions hold a secret — a known shape
// or the value of an environment variable airlock passes to a server — so that
// neither rules.toml nor the audit log ever holds it. from says where it came from.
func (e *Engine) RememberRule(p model.RuleProposal, policy trust.Action, tool model.ToolInfo, from string) (SavedRule, error) {
	if err := CheckProposal(p, policy, tool); err != nil {
		return SavedRule{}, err
	}
	if err := refuseSecrets(p.When, e.known); err != nil {
		return SavedRule{}, err
	}
	sr := SavedRule{ID: newRuleID(), Server: p.Server, Tool: p.Tool, When: p.When, Policy: policy.String(), Reason: p.Reason, From: from, Created: e.now().UTC().Truncate(time.Second)}
	if _, err := compileOne(sr, e.home, RulesFile); err != nil {
		return SavedRule{}, err
	}
	if e.rules == nil {
		return SavedRule{}, errors.New("no rules file")
	}
	if err := e.rules.update(func(cur []SavedRule) ([]SavedRule, error) { return append(cur, sr), nil }); err != nil {
		return SavedRule{}, fmt.Errorf("saving the rule: %w", err)
	}
	if e.rulesChanged != nil {
		e.rulesChanged(sr.Server)
	}
	e.audit(audit.Record{Kind: "rule-saved", Server: sr.Server, Tool: sr.Tool, DecidedBy: string(trust.DecidedByPerson),
		Reason: "the person saved rule " + sr.ID + " (" + sr.Policy + " when " + trust.DescribeWhen(sr.When) + ") from " + from})
	return sr, nil
}

// Rules lists the remembered decisions, with how often each decided a call in this
// process; err is the rules file's problem, if any (its rules stay as last read).
func (e *Engine) Rules() ([]RememberedRule, error) {
	s := e.rules
	if s == nil {
		return nil, nil
	}
	s.mu.Lock()
	s.reloadLocked()
	saved, home, err := s.saved, s.home, s.err
	s.mu.Unlock()
	return remembered(saved, e.RuleMatches, home), err
}

func remembered(saved []SavedRule, matched func(string) int, home string) []RememberedRule {
	out := make([]RememberedRule, 0, len(saved))
	for _, sr := range saved {
		r := RememberedRule{SavedRule: sr}
		if matched != nil {
			r.Matched = matched(sr.ID)
		}
		if _, err := compileOne(sr, home, RulesFile); err != nil {
			r.Problem = err.Error()
		}
		out = append(out, r)
	}
	return out
}

// RevokeRule removes a remembered decision by ID, audited (kind rule-revoked).
func (e *Engine) RevokeRule(id string) error {
	if e.rules == nil {
		return errors.New("no rules file")
	}
	sr, err := revokeIn(e.rules, id)
	if err != nil {
		return err
	}
	if e.rulesChanged != nil {
		e.rulesChanged(sr.Server)
	}
	e.audit(ruleRevokedRecord(sr))
	return nil
}

func revokeIn(s *rulesStore, id string) (SavedRule, error) {
	var gone SavedRule
	err := s.update(func(cur []SavedRule) ([]SavedRule, error) {
		i := slices.IndexFunc(cur, func(r SavedRule) bool { return r.ID == id })
		if i < 0 {
			return nil, fmt.Errorf("no remembered rule %q", id)
		}
		gone = cur[i]
		return slices.Delete(cur, i, i+1), nil
	})
	return gone, err
}

func ruleRevokedRecord(sr SavedRule) audit.Record {
	return audit.Record{Kind: "rule-revoked", Server: sr.Server, Tool: sr.Tool, DecidedBy: string(trust.DecidedByPerson),
		Reason: "the person revoked rule " + sr.ID + " (" + sr.Policy + " when " + trust.DescribeWhen(sr.When) + ")"}
}

// ListRules reads a rules file, for `airlock rules list` (match counts are per
// running process, so none here).
func ListRules(path string) ([]RememberedRule, error) {
	saved, err := readRulesFile(path)
	if err != nil {
		return nil, err
	}
	return remembered(saved, nil, homeDir()), nil
}

// RevokeRule removes a remembered rule from a rules file, for `airlock rules revoke`,
// writing its audit record to log (when not nil). Every running airlock sees the
// change on its next decision.
func RevokeRule(path, id string, log *audit.Log) (SavedRule, error) {
	sr, err := revokeIn(newRulesStore(path, homeDir()), id)
	if err != nil {
		return SavedRule{}, err
	}
	if log != nil {
		r := ruleRevokedRecord(sr)
		r.TS = time.Now().UTC()
		if err := log.Append(r); err != nil {
			return sr, err
		}
	}
	return sr, nil
}
