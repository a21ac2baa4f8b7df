package dashboard

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Payload encodings of payloadView.
const (
	encText = "text" // valid UTF-8 without control characters: shown as text
	encHex  = "hex"  // anything else: a hex dump (offset, bytes, ASCII)
)

// hexPerLine is how many bytes one line of a hex dump shows: 8 keeps a line at 44
// characters, narrow enough for a table cell.
const hexPerLine = 8

// payloadView is a payload as the lists show it: at most PreviewBytes of text, or a hex dump
// of at most PreviewBytes/8 bytes, with the real size.
type payloadView struct {
	Size      int    `json:"size"`     // bytes
	Encoding  string `json:"encoding"` // "text" or "hex"
	Preview   string `json:"preview"`
	Truncated bool   `json:"truncated"` // the preview shows only the start
	// Offloaded: the payload lives in its own key and is not loaded (Size is its size).
	Offloaded bool `json:"offloaded,omitempty"`
}

// previewPayload builds the preview of b with limit bytes of text.
func previewPayload(b []byte, limit int) payloadView {
	v := payloadView{Size: len(b)}
	if isText(b) {
		cut := textPrefix(b, limit)
		v.Encoding, v.Preview, v.Truncated = encText, string(cut), len(cut) < len(b)
		return v
	}
	n := min(len(b), max(limit/8, hexPerLine)) // a dump line shows 8 bytes in 44 characters
	v.Encoding, v.Preview, v.Truncated = encHex, hexDump(b[:n]), n < len(b)
	return v
}

// hexDump renders b as lines of offset, hexPerLine bytes in hex, and those bytes as ASCII
// ("." for anything not printable):
//
//	00000000  00 01 fe ff 61 62 1b 5b  |....ab.[|
func hexDump(b []byte) string {
	var out strings.Builder
	for off := 0; off < len(b); off += hexPerLine {
		line := b[off:min(off+hexPerLine, len(b))]
		ascii := make([]byte, len(line))
		for i, c := range line {
			ascii[i] = '.'
			if c >= 0x20 && c < 0x7f {
				ascii[i] = c
			}
		}
		fmt.Fprintf(&out, "%08x  %-*s  |%s|\n", off, hexPerLine*3-1, spacedHex(line), ascii)
	}
	return out.String()
}

// spacedHex is "00 01 fe".
func spacedHex(b []byte) string {
	h := hex.EncodeToString(b)
	var out strings.Builder
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			out.WriteByte(' ')
		}
		out.WriteString(h[i : i+2])
	}
	return out.String()
}

// isText reports valid UTF-8 whose runes are printable or ordinary whitespace.
func isText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) && r != '\n' && r != '\r' && r != '\t' {
			return false
		}
	}
	return true
}

// textPrefix cuts b to at most limit bytes at a rune boundary.
func textPrefix(b []byte, limit int) []byte {
	if len(b) <= limit {
		return b
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return b[:cut]
}

// payloadData is a whole payload for JSON: the text when it is valid UTF-8, else base64.
func payloadData(b []byte) (data, encoding string) {
	if utf8.Valid(b) {
		return string(b), "utf8"
	}
	return base64.StdEncoding.EncodeToString(b), "base64"
}
