package invite

import "errors"

var (
	// ErrUnknown: no invite has this code, or no entry this ID (never
	// made, revoked, or long expired and forgotten).
	ErrUnknown = errors.New("unknown invite")
	// ErrUsed: the code was used already; a code lets one browser in once.
	ErrUsed = errors.New("invite already used")
	// ErrExpired: the code was not used before its expiry.
	ErrExpired = errors.New("invite expired")
	// ErrBadTTL: an invite's lifetime is out of MinTTL..MaxTTL.
	ErrBadTTL = errors.New("invite lifetime out of range")
)
