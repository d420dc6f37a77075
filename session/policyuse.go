package session

import (
	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// What the Manager does with the managed policy (docs/policy.md). The policy was
// applied to the config it was given (config.Policy.Apply): trust, tiers, limits,
// labels and rates are already the stricter of the two. What only a classified
// tool can show is done here: the policy's cap on the tool and on its tier holds
// the tool's action after the person's own tool policy, and marks the tool held,
// so that no allow rule, grant or "always" of the person's outranks it.

// holdTool applies the policy's caps (the tool's and its tier's) to class and
// returns the tool's hold, nil when the policy sets nothing for it.
func (m *Manager) holdTool(tc config.Tool, class *trust.Classification) *model.PolicyHold {
	tier := m.cfg.Managed.TierCap(class.Tier)
	cp := tc.Cap
	if tier.Action != trust.ActionUnset && (cp.Action == trust.ActionUnset || config.Stricter(cp.Action, tier.Action) != cp.Action) {
		cp = tier
	}
	if cp.Action == trust.ActionUnset && len(tc.PolicyRules) == 0 {
		return nil
	}
	h := &model.PolicyHold{Source: cp.Source.String(), Rules: tc.PolicyRules}
	if cp.Action >= trust.Ask {
		h.Action = cp.Action
		capAction(class, cp)
	}
	if len(tc.PolicyRules) > 0 {
		h.RuleSet = trust.NewRuleSet(tc.PolicyRules)
	}
	return h
}

// capAction holds class's action to the cap, saying so last (the sentence a
// question names as why it asked).
func capAction(class *trust.Classification, cp config.Cap) {
	if class.Tier == trust.TierBlocked || class.Action == trust.Deny || config.Stricter(class.Action, cp.Action) == class.Action {
		return
	}
	class.Action = cp.Action
	verb := "asks before"
	if cp.Action == trust.Deny {
		verb = "denies"
	}
	class.Reasons = append(class.Reasons[:len(class.Reasons):len(class.Reasons)], "the team policy "+verb+" this tool's calls ("+cp.Source.String()+")")
}

// holdChannel applies the policy's read-tier cap to a server's resources or
// prompts channel and returns its hold (nil when the policy sets neither).
func (m *Manager) holdChannel(s *server, k trust.ChannelKind, class *trust.Classification) *model.PolicyHold {
	src := s.cfg.ResourcesSource
	if k == trust.KindPrompts {
		src = s.cfg.PromptsSource
	}
	cp := m.cfg.Managed.TierCap(trust.TierRead)
	if src.IsPolicy() {
		a := channelPolicy(s, k)
		if cp.Action == trust.ActionUnset || config.Stricter(cp.Action, a) != cp.Action {
			cp = config.Cap{Action: a, Source: src}
		}
	}
	if cp.Action < trust.Ask {
		return nil
	}
	capAction(class, cp)
	return &model.PolicyHold{Action: cp.Action, Source: cp.Source.String()}
}

// policyTrustSource is what ServerInfo.TrustSource says of a server whose trust
// is now t.
func policyTrustSource(s *server, t trust.ServerTrust) (source, blocked string) {
	if t != s.cfg.Trust || !s.cfg.TrustSource.IsPolicy() {
		return "", ""
	}
	return s.cfg.TrustSource.String(), s.cfg.Blocked
}
