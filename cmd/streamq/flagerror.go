package main

import (
	"errors"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// flagError is the usage error of a flag cobra could not parse. A number flag given
// something else says what it wants in the command's words, not strconv's.
func flagError(err error) error {
	var bad *pflag.InvalidValueError
	var num *strconv.NumError
	if !errors.As(err, &bad) || !errors.As(err, &num) {
		return &usageError{err: err}
	}
	f := bad.GetFlag()
	return usageErrorf("invalid value %q for --%s: %s", bad.GetValue(), f.Name, wantNumber(f.Value.Type(), num))
}

// wantNumber says what a number flag of pflag type typ takes, for the parse error num.
func wantNumber(typ string, num *strconv.NumError) string {
	switch {
	case errors.Is(num.Err, strconv.ErrRange):
		return "out of range"
	case strings.HasPrefix(typ, "uint"):
		return "give a whole number, 0 or more"
	case strings.HasPrefix(typ, "int"):
		return "give a whole number"
	case strings.HasPrefix(typ, "float"):
		return "give a number"
	case typ == "bool":
		return "give true or false"
	}
	return num.Err.Error()
}
