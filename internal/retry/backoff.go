package retry

import (
	"math/rand/v2"
	"time"
)

// Exponential returns base * 2^(attempt-1) capped at limit, without overflow: attempt <= 0
// reads as 1, and a cap below base gives base. jitter in [0, 1] spreads the result down by up
// to that fraction (0: none).
func Exponential(base, limit time.Duration, attempt int, jitter float64) time.Duration {
	if base <= 0 {
		return 0
	}
	if limit < base {
		limit = base
	}
	if attempt < 1 {
		attempt = 1
	}
	d := base
	for i := 1; i < attempt && d < limit; i++ {
		if d > limit/2 {
			d = limit
			break
		}
		d *= 2
	}
	d = min(d, limit)
	if jitter > 0 {
		d -= time.Duration(rand.Float64() * min(jitter, 1) * float64(d))
	}
	return d
}
