package session

import "github.com/airlock-mcp/airlock/session/oauth"

// OAuthOptions configures how a Manager authorizes with servers that have a
// [servers.NAME.oauth] table (session/oauth).
type OAuthOptions = oauth.Options

// AuthorizationRequested reports that a server needs the person to authorize airlock
// in a browser: URL is the authorization server's page (server-influenced text:
// escape before display). airlock waits for the redirect on a loopback address.
type AuthorizationRequested struct {
	Server string
	URL    string
}

func (AuthorizationRequested) event() {}

// oauthReporter passes what a server's OAuth handler says on as the server's events.
type oauthReporter struct {
	server string
	push   func(Event)
}

func (r oauthReporter) AuthorizationRequested(url string) {
	r.push(AuthorizationRequested{Server: r.server, URL: url})
}

func (r oauthReporter) Log(text string) {
	r.push(LogLine{Server: r.server, Source: "airlock", Text: text})
}

func (r oauthReporter) Error(err error) {
	r.push(LogLine{Server: r.server, Source: "airlock", Text: redactURLs(err).Error()})
}
