package session

import (
	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/conn"
)

// oauthReporter passes what a server's OAuth handler says on as the server's events.
type oauthReporter struct {
	server string
	push   func(model.Event)
}

func (r oauthReporter) AuthorizationRequested(url string) {
	r.push(model.AuthorizationRequested{Server: r.server, URL: url})
}

func (r oauthReporter) Log(text string) {
	r.push(model.LogLine{Server: r.server, Source: "airlock", Text: text})
}

func (r oauthReporter) Error(err error) {
	r.push(model.LogLine{Server: r.server, Source: "airlock", Text: conn.RedactURLs(err).Error()})
}
