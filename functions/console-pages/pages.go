package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"stampduty/shared/config"
	"stampduty/shared/function"
	"stampduty/shared/stampduty"
)

// web holds the console's files, served as they are: no build step.
//
//go:embed web
var web embed.FS

// signIn is what the page needs to sign in straight to Cognito
// (/console/config.json): the endpoint InitiateAuth is sent to, the
// pool's region, and the app client's id.
type signIn struct {
	Endpoint string `json:"endpoint"`
	Region   string `json:"region"`
	ClientID string `json:"clientId"`
}

// signInConfig reads the sign-in settings: COGNITO_CLIENT_ID (the
// template's !Ref StaffUserPoolClient), AWS_REGION (which Lambda sets), and
// COGNITO_ENDPOINT, declared empty in the template and set only by a local
// runtime (config.Env.Endpoint refuses it elsewhere), as S3_ENDPOINT is;
// empty, the endpoint is Cognito's of the region.
func signInConfig(env *config.Env) signIn {
	c := signIn{ClientID: env.Require("COGNITO_CLIENT_ID"), Region: env.Require("AWS_REGION")}
	c.Endpoint = env.Endpoint("COGNITO_ENDPOINT")
	if c.Endpoint == "" {
		c.Endpoint = "https://cognito-idp." + c.Region + ".amazonaws.com/"
	}
	return c
}

// types are the Content-Types of the files, by extension.
var types = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
	".json": "application/json",
}

// policy is the pages' Content-Security-Policy: only the console's own
// files (no inline script or style, no eval), fetches to the API and to
// the Cognito endpoint cognito, the caller's document shown inline from
// the API's download links (which redirect to S3: frame-src and img-src
// allow https: and, locally, the endpoint's http origin), never framed.
func policy(cognito, files string) string {
	return strings.Join([]string{
		"default-src 'none'",
		"script-src 'self'",
		"style-src 'self'",
		"img-src 'self' " + files,
		"frame-src 'self' " + files,
		"connect-src 'self' " + cognito + " " + files,
		"base-uri 'none'",
		"form-action 'self'",
		"frame-ancestors 'none'",
	}, "; ")
}

// origin returns the scheme and host of u ("https://host"), or u itself
// when it does not parse.
func origin(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return u
	}
	return p.Scheme + "://" + p.Host
}

// pages serves the console under /console/: /console and /console/ the
// shell (index.html), /console/<file> one of web's files, config.json the
// sign-in settings c; anything else 404 in the envelope. Every answer
// carries the security headers; none reads a table.
func pages(c signIn) http.Handler {
	sub, err := fs.Sub(web, "web")
	if err != nil {
		panic(err) // web is embedded: it has the folder
	}
	cfg, err := json.Marshal(c)
	if err != nil {
		panic(err) // three strings
	}
	all, err := prepare(sub)
	if err != nil {
		panic(err) // web is embedded: its files read
	}
	files := "https:"
	if strings.HasPrefix(c.Endpoint, "http://") {
		// Locally the files come from the local S3 over http.
		files += " http:"
	}
	csp := policy(origin(c.Endpoint), files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-cache")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			function.WriteError(w, r, stampduty.Errorf(stampduty.ENOTALLOWED, "Method %s is not allowed here", r.Method))
			return
		}
		name, under := strings.CutPrefix(path.Clean(r.URL.Path), "/console")
		if name != "" && !strings.HasPrefix(name, "/") {
			under = false // /consolesomething
		}
		name = strings.TrimPrefix(name, "/")
		switch name {
		case "", "index.html":
			name = "index.html"
		case "config.json":
			h.Set("Content-Type", types[".json"])
			w.Write(cfg)
			return
		}
		f, ok := all[name]
		if !ok || !under {
			function.WriteError(w, r, stampduty.Errorf(stampduty.ENOTFOUND, "Not Found"))
			return
		}
		h.Set("Content-Type", f.ctype)
		h.Add("Vary", "Accept-Encoding")
		body, tag := f.body, f.tag
		if acceptsGzip(r) {
			h.Set("Content-Encoding", "gzip")
			body, tag = f.gzipped()
		}
		h.Set("ETag", tag)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
	})
}

// file is one of the console's files as it is served: its type, its bytes
// and an ETag (the first 128 bits of their SHA-256), and their gzip with
// its own ETag, made on the first request that takes gzip.
type file struct {
	ctype string
	body  []byte
	tag   string
	once  sync.Once
	gz    []byte
	gzTag string
}

// gzipped returns f's bytes gzipped and their ETag, compressing them on
// the first call: an instance pays for each file's gzip (a fraction of a
// millisecond) when a browser first asks for it, not in its cold start
// (all the files at init took about 7 ms of it, measured by make bench).
func (f *file) gzipped() ([]byte, string) {
	f.once.Do(func() {
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression) // the level is valid
		zw.Write(f.body)                                        // a bytes.Buffer takes every write
		zw.Close()
		f.gz, f.gzTag = gz.Bytes(), strings.TrimSuffix(f.tag, `"`)+`-gzip"`
	})
	return f.gz, f.gzTag
}

// prepare reads every file of sub whose type is known, with its ETag, so
// that a reload whose ETag matches is a 304 with no body, and gzip
// (gzipped) can cut a page load to about a third of its bytes (API
// Gateway compresses nothing).
func prepare(sub fs.FS) (map[string]*file, error) {
	all := map[string]*file{}
	err := fs.WalkDir(sub, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ct, known := types[path.Ext(name)]
		if !known {
			return nil
		}
		body, err := fs.ReadFile(sub, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		all[name] = &file{ctype: ct, body: body, tag: `"` + hex.EncodeToString(sum[:16]) + `"`}
		return nil
	})
	return all, err
}

// acceptsGzip reports whether r's Accept-Encoding takes gzip (and does
// not refuse it with q=0).
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if strings.EqualFold(strings.TrimSpace(coding), "gzip") || strings.TrimSpace(coding) == "*" {
				q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
				return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
			}
		}
	}
	return false
}
