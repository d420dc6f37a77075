// Package call is the screen of the person's own call while it runs: what is
// called, a progress bar when the server reports progress with a total,
// otherwise the spinner and the elapsed time; esc cancels it. The root runs the
// call and hands the screen its progress, the spinner's frame and the time; the
// screen never reads the session.
package call

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/progress"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/ui/cli"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/screen"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// KeyMap holds the keys while a call runs.
type KeyMap struct {
	Cancel key.Binding
}

// DefaultKeyMap returns the running call's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel the call"))}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Cancel} }

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{{k.Cancel}} }

// Model is the person's own call while it runs: what is called, a progress bar
// when the server reports progress with a total, otherwise the spinner and the
// elapsed time; esc cancels it.
type Model struct {
	*common.Common
	keys KeyMap

	// Gen numbers calls; messages of an earlier call are dropped.
	Gen     uint64
	Running bool
	Tool    model.ToolInfo
	Args    json.RawMessage
	started time.Time
	// Cancel cancels the running call's context (go-sdk then sends
	// notifications/cancelled). A func value: copies of the model share it safely.
	Cancel context.CancelFunc
	// Cancelled is set when the person pressed esc.
	Cancelled bool

	// CallID is the running call's, from its first progress notification.
	CallID   string
	progress model.Progress
	// HasProg says a progress notification of the call came.
	HasProg bool
	bar     progress.Model

	// Frame is the spinner's frame and Now the time, both the root's, set
	// before the screen is drawn.
	Frame string
	Now   time.Time

	width, height int
}

// New returns the running call's screen over the root's Common.
func New(com *common.Common) Model {
	return Model{Common: com, keys: DefaultKeyMap(), bar: newBar(com.St)}
}

// Restyle draws the progress bar in the current theme.
func (c *Model) Restyle() { c.bar = newBar(c.St) }

// newBar is the progress bar in the styles' colours (plain blocks without colour).
func newBar(st *theme.Styles) progress.Model {
	opts := []progress.Option{progress.WithoutPercentage()}
	if st.NoColor {
		opts = append(opts, progress.WithColors(lipgloss.NoColor{}), progress.WithFillCharacters('█', '░'))
	} else {
		opts = append(opts, progress.WithDefaultBlend())
	}
	return progress.New(opts...)
}

// SetSize sets the outer size.
func (c *Model) SetSize(w, h int) {
	c.width, c.height = w, h
	iw, _ := common.PaneInner(w, h)
	c.bar.SetWidth(max(iw-20, 10))
}

// Begin starts showing a call; the root starts the Cmd.
func (c *Model) Begin(gen uint64, t model.ToolInfo, args json.RawMessage, now time.Time, cancel context.CancelFunc) {
	*c = Model{Common: c.Common, keys: c.keys, bar: c.bar, width: c.width, height: c.height,
		Gen: gen, Running: true, Tool: t, Args: args, started: now, Cancel: cancel}
}

// End stops showing the call and releases its context.
func (c *Model) End() {
	if c.Cancel != nil {
		c.Cancel()
	}
	c.Running, c.Cancel = false, nil
}

// SetProgress takes a progress notification of the running call.
func (c *Model) SetProgress(p model.Progress) {
	if c.CallID == "" {
		c.CallID = p.CallID
	}
	if p.CallID != c.CallID {
		return
	}
	c.progress, c.HasProg = p, true
}

// Cancelling asks the root to say that the call is being cancelled.
type Cancelling struct{}

// Update handles esc (cancel); the root routes keys here while the call runs and no
// dialog is open. Once the call is cancelled every key says Cancelling.
func (c *Model) Update(msg tea.Msg) (screen.Intent, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && key.Matches(k, c.keys.Cancel) && c.Running && !c.Cancelled {
		c.Cancelled = true
		if c.Cancel != nil {
			c.Cancel()
		}
	}
	if c.Cancelled {
		return Cancelling{}, nil
	}
	return nil, nil
}

// View renders the running call, with the root's spinner frame and time.
func (c *Model) View() string {
	spin, now := c.Frame, c.Now
	st := c.St
	iw, _ := common.PaneInner(c.width, c.height)
	elapsed := now.Sub(c.started).Truncate(100 * time.Millisecond)
	lines := []string{
		st.Header.Render(common.Fit("Calling "+common.Inline(st, c.Tool.Ref.Qualified(), iw-20), iw)),
		"",
	}
	switch {
	case c.Cancelled:
		lines = append(lines, st.WarnText.Render("cancelling… ")+st.Muted.Render("the server was told to stop (notifications/cancelled)"))
	case c.HasProg && c.progress.Total > 0:
		pct := min(max(c.progress.Progress/c.progress.Total, 0), 1)
		lines = append(lines, c.bar.ViewAs(pct)+" "+strconv.Itoa(int(pct*100))+"%  "+
			fmtNum(c.progress.Progress)+"/"+fmtNum(c.progress.Total)+"  "+elapsed.String())
	case c.HasProg:
		lines = append(lines, st.WarnText.Render(spin)+" "+fmtNum(c.progress.Progress)+" done · "+elapsed.String())
	default:
		lines = append(lines, st.WarnText.Render(spin)+" running · "+elapsed.String())
	}
	if c.HasProg && c.progress.Message != "" {
		// the server's own words, said to be its own
		msg := c.progress.Message
		if c.progress.Server != "" {
			msg = c.progress.Server + " says: " + msg
		}
		lines = append(lines, "", common.Inline(st, msg, iw))
	}
	lines = append(lines, "", st.Key.Render("arguments"))
	lines = append(lines, common.BlockLines(st, cli.PrettyJSON(c.Args), iw, common.MaxShownBytes, st.Gutter.Render(common.Gutter))...)
	return common.PaneBox(st, true, c.width, c.height, lines)
}

func fmtNum(f float64) string {
	if f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return fmt.Sprintf("%.1f", f)
}

// KeyMap returns the bindings that apply now, for the footer.
func (c *Model) KeyMap() help.KeyMap {
	return common.KeyMapFunc{Short: c.keys.ShortHelp(), Full: c.keys.FullHelp()}
}
