// Command httpfn is the Lambda function of the apigw round-trip test: a
// net/http handler behind aws-lambda-go-api-proxy, like the project's
// functions. It answers with what it received.
package main

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

func echo(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var cookies []string
	for _, c := range r.Cookies() {
		cookies = append(cookies, c.Name+"="+c.Value)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Handler", "echo")
	w.Header().Add("X-Multi", "one")
	w.Header().Add("X-Multi", "two")
	http.SetCookie(w, &http.Cookie{Name: "session", Value: "abc", Path: "/"})
	http.SetCookie(w, &http.Cookie{Name: "theme", Value: "dark"})
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"method":   r.Method,
		"path":     r.URL.Path,
		"rawQuery": r.URL.RawQuery,
		"headers":  r.Header,
		"cookies":  cookies,
		"body":     body,
	})
}

func main() {
	lambda.Start(httpadapter.NewV2(http.HandlerFunc(echo)).ProxyWithContext)
}
