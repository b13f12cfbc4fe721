package codeinterp

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

func TestAllowURL(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.URL.Path+" "+r.Header.Get("X-Key"))
		mu.Unlock()
		w.Write([]byte("a,b\n1,2\n"))
	})}
	go srv.Serve(ln)
	defer srv.Close()
	prefix := "http://" + ln.Addr().String() + "/v1/"

	s, err := NewSession(WithAllowURL(prefix, "X-Key: k-90ab"), WithURLLimits(4096, 1<<20, 0))
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "WithURLLimits") {
		t.Fatalf("a timeout of 0: %v", err)
	}
	s, err = NewSession(WithAllowURL(prefix, "X-Key: k-90ab\r\nX: y"))
	if !errors.Is(err, ErrInvalid) || strings.Contains(err.Error(), "k-90ab") {
		t.Fatalf("a header with CR LF: %v", err)
	}
	s, err = NewSession(WithAllowURL(prefix, "X-Key: k-90ab"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := run(t, s, "import pandas as pd\nprint(pd.read_csv('"+prefix+"t.csv').to_dict('list'))\n"+
		"try:\n    pd.read_csv('"+strings.Replace(prefix, "/v1/", "/v2/", 1)+"')\n"+
		"except OSError as e:\n    print(e)\n")
	if r.Status != StatusOK || !strings.Contains(r.Stdout, "{'a': [1], 'b': [2]}") ||
		!strings.Contains(r.Stdout, "is not allowed in this sandbox; allowed: "+prefix) ||
		strings.Contains(r.Stdout, "k-90ab") {
		t.Fatalf("%v %q %+v", r.Status, r.Stdout, r.Error)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 1 || keys[0] != "/v1/t.csv k-90ab" {
		t.Errorf("the server saw %q", keys)
	}
}
