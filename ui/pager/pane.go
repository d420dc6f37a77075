package pager

import (
	"fmt"
	"strings"

	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// Pane is a pager as the body of a bordered pane, below the pane's one heading
// row: it keeps the pane's outer size and draws the pane around its lines.
type Pane struct {
	Pager
	width, height int
}

// NewPane returns a pane over the given scrolling keys.
func NewPane(keys common.ScrollKeyMap) Pane {
	return Pane{Pager: New(keys)}
}

// SetSize sets the pane's outer size and fits the pager to the body.
func (p *Pane) SetSize(w, h int) {
	p.width, p.height = w, h
	iw, ih := common.PaneInner(w, h)
	p.SetWidth(iw)
	p.SetHeight(max(ih-1, 1))
}

// InnerWidth is the width inside the pane's border: what the content is wrapped
// to, and what the heading is fitted into.
func (p *Pane) InnerWidth() int {
	iw, _ := common.PaneInner(p.width, p.height)
	return iw
}

// Percent is how far down the content is scrolled, as the heading's muted "  N%".
func (p *Pane) Percent(st *theme.Styles) string {
	return st.Muted.Render(fmt.Sprintf("  %d%%", int(p.ScrollPercent()*100)))
}

// Box renders the pane: head, fitted and in the header style, above the scrolled
// lines.
func (p *Pane) Box(st *theme.Styles, head string) string {
	lines := append([]string{st.Header.Render(common.Fit(head, p.InnerWidth()))}, strings.Split(p.View(), "\n")...)
	return common.PaneBox(st, true, p.width, p.height, lines)
}

// KeepScroll calls render, which sets the content again, and keeps the scroll
// offset where it was.
func (p *Pane) KeepScroll(render func()) {
	y := p.YOffset()
	render()
	p.SetYOffset(y)
}
