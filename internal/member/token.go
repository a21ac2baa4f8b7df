package member

import "strings"

// TokenMember extracts the member name from a lease token "member#nonce" (the whole token
// when it has no '#').
func TokenMember(token string) string {
	if i := strings.LastIndexByte(token, '#'); i >= 0 {
		return token[:i]
	}
	return token
}
