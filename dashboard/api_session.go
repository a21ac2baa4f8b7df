package dashboard

import "net/http"

// sessionView is GET api/session: what the page needs before anything else.
type sessionView struct {
	ReadOnly bool   `json:"readOnly"`
	Auth     string `json:"auth"` // "none", "token" or "basic"
	// CSRFToken must be sent in the X-CSRF-Token header of every write ("" when read-only).
	CSRFToken        string `json:"csrfToken"`
	RefreshMs        int64  `json:"refreshMs"`
	SampleIntervalMs int64  `json:"sampleIntervalMs"`
	SampleWindowMs   int64  `json:"sampleWindowMs"`
	PreviewBytes     int    `json:"previewBytes"`
}

func (h *Handler) session(*http.Request) (any, error) {
	v := sessionView{
		ReadOnly: !h.opts.AllowWrites, Auth: h.auth.mode,
		RefreshMs: ms(h.opts.RefreshInterval), SampleIntervalMs: ms(h.opts.SampleInterval),
		SampleWindowMs: ms(h.opts.SampleWindow), PreviewBytes: h.opts.PreviewBytes,
	}
	if h.opts.AllowWrites {
		v.CSRFToken = h.csrf
	}
	return v, nil
}
