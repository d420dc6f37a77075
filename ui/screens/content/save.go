// Package content is what the result and output screens share about the content
// a server sent: each content block drawn by kind (escaped, binary described by
// type and size, never drawn), and saving images, audio and blobs to files.
//
// A saved file's name is airlock's own, never the server's:
// airlock-SERVER-WHAT-TIME-N.EXT with SERVER and WHAT cut to safe characters and
// EXT from an allowlist of media types; the file is created new (O_EXCL: an
// existing file or a link in its place is never written through), owner-only
// (0600). See docs/explore.md.
package content

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/screen"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// saveExt maps the media types airlock names files after to their extension;
// any other type is saved as .bin, so that a server cannot choose how the file
// opens (no .html, .svg, .exe, .desktop).
var saveExt = map[string]string{
	"image/png":        "png",
	"image/jpeg":       "jpg",
	"image/gif":        "gif",
	"image/webp":       "webp",
	"image/bmp":        "bmp",
	"audio/wav":        "wav",
	"audio/x-wav":      "wav",
	"audio/wave":       "wav",
	"audio/mpeg":       "mp3",
	"audio/mp3":        "mp3",
	"audio/ogg":        "ogg",
	"audio/webm":       "webm",
	"audio/flac":       "flac",
	"audio/mp4":        "m4a",
	"audio/aac":        "aac",
	"text/plain":       "txt",
	"application/json": "json",
	"application/pdf":  "pdf",
}

// ExtFor returns the extension for a media type (parameters and case ignored).
func ExtFor(mime string) string {
	m := strings.ToLower(strings.TrimSpace(mime))
	if i := strings.IndexByte(m, ';'); i >= 0 {
		m = strings.TrimSpace(m[:i])
	}
	if e, ok := saveExt[m]; ok {
		return e
	}
	return "bin"
}

// maxNamePart bounds each server-derived part of a saved file's name.
const maxNamePart = 32

// SafePart turns a server or tool name into letters, digits, '_' and '-' only
// (any run of anything else becomes one '-'), at most maxNamePart bytes; "x"
// when nothing is left.
func SafePart(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= maxNamePart {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			if !strings.HasSuffix(b.String(), "-") {
				b.WriteByte('-')
			}
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		return "x"
	}
	return out
}

// SaveName is the file name for the n-th block of what (a tool or a resource)
// of server at a time.
func SaveName(server, what, mime string, at time.Time, n int) string {
	return "airlock-" + SafePart(server) + "-" + SafePart(what) + "-" + at.UTC().Format("20060102-150405") +
		"-" + strconv.Itoa(n) + "." + ExtFor(mime)
}

// SaveBlob writes data to a new owner-only file in dir ("" is the working
// directory) and returns its path. A name that exists (a file or a link) is
// never opened: the next free suffix is tried, up to 100.
func SaveBlob(dir, server, what, mime string, at time.Time, n int, data []byte) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("the working directory: %w", err)
		}
		dir = wd
	}
	base := SaveName(server, what, mime, at, n)
	ext := filepath.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	for try := 1; try <= 100; try++ {
		name := base
		if try > 1 {
			name = stem + "-" + strconv.Itoa(try) + ext
		}
		path := filepath.Join(dir, name)
		// O_EXCL with O_CREATE fails on any existing name, a symbolic link
		// included (dangling or not): nothing is written through a link.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			os.Remove(path)
			return "", err
		}
		if err := f.Close(); err != nil {
			os.Remove(path)
			return "", err
		}
		return path, nil
	}
	return "", fmt.Errorf("no free file name for %s in %s", base, dir)
}

// Blob is one savable piece of content: the N-th block of a result or a
// resource's contents, with its media type as the server gave it.
type Blob struct {
	N    int
	MIME string
	Data []byte
}

// Blobs lists the images, audio and embedded blobs of content blocks.
func Blobs(cs []mcp.Content) []Blob {
	var out []Blob
	for i, c := range cs {
		switch c := c.(type) {
		case *mcp.ImageContent:
			out = append(out, Blob{N: i, MIME: c.MIMEType, Data: c.Data})
		case *mcp.AudioContent:
			out = append(out, Blob{N: i, MIME: c.MIMEType, Data: c.Data})
		case *mcp.EmbeddedResource:
			if c.Resource != nil && len(c.Resource.Blob) > 0 {
				out = append(out, Blob{N: i, MIME: c.Resource.MIMEType, Data: c.Resource.Blob})
			}
		}
	}
	return out
}

// Saved reports the end of saving the blobs of one result or resource.
type Saved struct {
	// Gen is the result's or resource's number when saving began: a newer one
	// shown meanwhile does not take the paths.
	Gen   uint64
	Paths map[int]string // block index → path
	Err   error
}

// Save asks the root to save blobs: each to its own new file in the root's save
// directory, named after Server, What and the time; Wrap turns the outcome into
// the message of the screen that asked.
type Save struct {
	Server, What string
	Gen          uint64
	Blobs        []Blob
	Wrap         func(Saved) tea.Msg
}

// SaveOf is the Save of blobs, or nil (nothing to ask) when there are none.
func SaveOf(server, what string, gen uint64, blobs []Blob, wrap func(Saved) tea.Msg) screen.Intent {
	if len(blobs) == 0 {
		return nil
	}
	return Save{Server: server, What: what, Gen: gen, Blobs: blobs, Wrap: wrap}
}

// AddSaved is saved with paths added: where more blobs were saved. A nil saved is
// made.
func AddSaved(saved, paths map[int]string) map[int]string {
	if saved == nil {
		saved = map[int]string{}
	}
	maps.Copy(saved, paths)
	return saved
}

// Cmd writes every blob to its own new file in dir, off the UI's goroutine.
func (s Save) Cmd(dir string, at time.Time) tea.Cmd {
	return func() tea.Msg {
		msg := Saved{Gen: s.Gen, Paths: map[int]string{}}
		for _, b := range s.Blobs {
			p, err := SaveBlob(dir, s.Server, s.What, b.MIME, at, b.N, b.Data)
			if err != nil {
				msg.Err = err
				break
			}
			msg.Paths[b.N] = p
		}
		return s.Wrap(msg)
	}
}

// Status says what saving did, in the status line.
func (msg Saved) Status(st *theme.Styles) string {
	n := len(msg.Paths)
	var s string
	if n > 0 {
		dir := ""
		for _, p := range msg.Paths {
			dir = filepath.Dir(p)
			break
		}
		s = "✓ saved " + strconv.Itoa(n) + " file" + common.Plural(n) + " (0600) to " + common.Inline(st, dir, 60)
	}
	if msg.Err != nil {
		if s != "" {
			s += "; "
		}
		s += "✗ could not save: " + common.Inline(st, msg.Err.Error(), 100)
	}
	return s
}
