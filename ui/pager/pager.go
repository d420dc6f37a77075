// Package pager is the one scrolling body of airlock's text views (details, a
// result, logs, help, a server's info, an exported fragment, what a read
// returned): a viewport driven by the scrolling keys, with top and bottom, and
// horizontal scrolling off because every line is wrapped to the width.
//
// A view checks its own keys first and hands every other message to Update.
package pager

import (
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/ui/common"
)

// Pager is a viewport with the scrolling keys of common.ScrollKeyMap. Its
// viewport's methods (SetContent, GotoTop, AtBottom, View, ...) are its own.
type Pager struct {
	viewport.Model
	keys common.ScrollKeyMap
}

// New returns a pager over the given scrolling keys.
func New(keys common.ScrollKeyMap) Pager {
	vp := viewport.New()
	vp.KeyMap = keys.ViewportKeys()
	return Pager{Model: vp, keys: keys}
}

// Update scrolls: Top and Bottom jump, every other message goes to the viewport.
func (p *Pager) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, p.keys.Top):
			p.GotoTop()
			return nil
		case key.Matches(k, p.keys.Bottom):
			p.GotoBottom()
			return nil
		}
	}
	var cmd tea.Cmd
	p.Model, cmd = p.Model.Update(msg)
	return cmd
}
