package codeinterp

/*
#include <stdlib.h>
#include <codeinterp.h>
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"
)

// WithAllowURL lets cells fetch the http or https URLs under prefix
// (scheme, host, port and path: "https://api.example.com/v1/") with
// urllib, requests or pandas; the host makes each request. headers
// ("Authorization: Bearer ...") are added to the requests under prefix,
// and never shown to the cell. Without any prefix a cell has no network.
// See ci_config_allow_url(3). A header's value is never in an error.
func WithAllowURL(prefix string, headers ...string) Option {
	return Option{"WithAllowURL", quote(prefix) + fmt.Sprintf(" with %d headers", len(headers)),
		"an http or https URL without userinfo, query or fragment, and headers of one " +
			"\"Name: value\" line each",
		func(c *C.ci_config) C.int {
			if hasNUL(prefix) {
				return C.CI_EINVAL
			}
			cp := C.CString(prefix)
			defer C.free(unsafe.Pointer(cp))
			if rc := C.ci_config_allow_url(c, cp); rc != C.CI_OK {
				return rc
			}
			for _, h := range headers {
				if hasNUL(h) {
					return C.CI_EINVAL
				}
				ch := C.CString(h)
				rc := C.ci_config_set_url_header(c, cp, ch)
				C.free(unsafe.Pointer(ch))
				if rc != C.CI_OK {
					return rc
				}
			}
			return C.CI_OK
		}}
}

// WithURLLimits caps one request a cell makes by URL: its body, its
// response's body (bytes) and its time, never past the cell's own timeout
// (default 16 MiB, 16 MiB, 30 s).
func WithURLLimits(requestBytes, responseBytes uint64, timeout time.Duration) Option {
	return Option{"WithURLLimits", fmt.Sprint(requestBytes, ", ", responseBytes, ", ", timeout),
		"sizes of 1 byte to 256 MiB (268435456 bytes), a timeout of 1 ms to 1 h",
		func(c *C.ci_config) C.int {
			return C.ci_config_set_url_limits(c, C.size_t(requestBytes), C.size_t(responseBytes),
				ms(timeout))
		}}
}
