package dashboard

import (
	"bytes"
	"embed"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"time"
)

// assets are the page, its scripts and styles: plain files, no build step.
//
//go:embed assets
var assets embed.FS

// serveIndex serves the single page; the pages are routed in the browser (#/topics/...).
func serveIndex(w http.ResponseWriter, r *http.Request) {
	serveFile(w, r, "index.html")
}

// serveAsset serves a file under assets/.
func serveAsset(w http.ResponseWriter, r *http.Request) {
	serveFile(w, r, r.PathValue("file"))
}

func serveFile(w http.ResponseWriter, r *http.Request, name string) {
	name = path.Clean("/" + name)[1:]
	data, err := fs.ReadFile(assets, "assets/"+name)
	if err != nil { // missing, or a directory
		http.NotFound(w, r)
		return
	}
	if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
}
