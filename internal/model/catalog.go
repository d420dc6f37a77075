package model

// ResourceInfo is one resource a server lists. Every string is server-controlled
// and kept as sent: escape before display.
type ResourceInfo struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	// Size is what the server says the content weighs (0: not said); it is not
	// checked and bounds nothing.
	Size int64 `json:"size,omitempty"`
}

// ResourceTemplateInfo is one resource template (an RFC 6570 URI template) a server
// lists. Strings are server-controlled: escape before display.
type ResourceTemplateInfo struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

// PromptInfo is one prompt a server lists, with its arguments. Strings are
// server-controlled: escape before display.
type PromptInfo struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Arguments   []PromptArgInfo `json:"arguments,omitempty"`
}

// PromptArgInfo is one argument of a prompt.
type PromptArgInfo struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}
