package server

import (
	"fmt"

	"github.com/redis/go-redis/v9"
)

// AuthProblem explains a server's refusal of the client's credentials, the way a user fixes
// it in go-redis's options; nil when err is not such a refusal. addr names the server ("" when
// unknown).
func AuthProblem(addr string, err error) error {
	switch {
	case err == nil:
		return nil
	case redis.HasErrorPrefix(err, "NOAUTH"), redis.HasErrorPrefix(err, "ERR Protocol error: unauthenticated"):
		return fmt.Errorf("the Redis server%s requires authentication and the client gave none: set Password "+
			"(and Username for an ACL user) in the client's options, or redis://:PASSWORD@HOST:PORT in its URL (%w)", at(addr), err)
	case redis.HasErrorPrefix(err, "WRONGPASS"), redis.HasErrorPrefix(err, "ERR invalid password"):
		return fmt.Errorf("the Redis server%s refused the client's user name or password: check Username and Password "+
			"in the client's options (%w)", at(addr), err)
	case redis.HasErrorPrefix(err, "ERR AUTH"), redis.HasErrorPrefix(err, "ERR Client sent AUTH"):
		return fmt.Errorf("the Redis server%s has no password set, but the client gives one: remove Password from "+
			"the client's options (%w)", at(addr), err)
	}
	return nil
}
