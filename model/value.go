package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Meta is open metadata: the store's flat fields nested at "/" ("a/b"
// → {"a": {"b": …}}), an object keyed exactly 0..n-1 made a list, and a
// name that is both a value and an object keeping the value under "".
// The node types the fields it knows (numbers, RFC 3339 times); every
// other value is a string.
type Meta map[string]Value

// ValueKind says which field of a Value holds it.
type ValueKind uint8

// The kinds of Value.
const (
	KindString ValueKind = iota // Str (times too, as RFC 3339)
	KindInt                     // Int
	KindFloat                   // Float
	KindObject                  // Object
	KindList                    // List
)

// Value is one metadata value. The zero Value is the empty string.
type Value struct {
	Kind   ValueKind
	Str    string
	Int    int64
	Float  float64
	Object Meta
	List   []Value
}

// StringValue, IntValue, FloatValue, ObjectValue and ListValue make a
// Value of each kind.
func StringValue(s string) Value     { return Value{Kind: KindString, Str: s} }
func IntValue(n int64) Value         { return Value{Kind: KindInt, Int: n} }
func FloatValue(f float64) Value     { return Value{Kind: KindFloat, Float: f} }
func ObjectValue(m Meta) Value       { return Value{Kind: KindObject, Object: m} }
func ListValue(items ...Value) Value { return Value{Kind: KindList, List: items} }

// MarshalJSON writes the value as encoding/json writes the Go value it
// holds (an object's keys sorted).
func (v Value) MarshalJSON() ([]byte, error) { return v.appendJSON(nil) }

func (v Value) appendJSON(b []byte) ([]byte, error) {
	switch v.Kind {
	case KindString:
		return appendString(b, v.Str), nil
	case KindInt:
		return strconv.AppendInt(b, v.Int, 10), nil
	case KindFloat:
		return appendFloat(b, v.Float)
	case KindObject:
		return appendObject(b, v.Object, func(b []byte, x Value) ([]byte, error) { return x.appendJSON(b) })
	case KindList:
		b = append(b, '[')
		for i, x := range v.List {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = x.appendJSON(b); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	return nil, fmt.Errorf("model: value of unknown kind %d", v.Kind)
}

// UnmarshalJSON reads a JSON value: strings, numbers (an integer literal
// that fits int64 as KindInt, any other as KindFloat, one beyond float64
// as the string it is written as), objects and lists. The node sends
// nothing else; true, false and null are read as the strings "true",
// "false" and "".
func (v *Value) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return errors.New("model: empty JSON value")
	}
	switch b[0] {
	case '{':
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(b, &raw); err != nil {
			return err
		}
		m := make(Meta, len(raw))
		for k, r := range raw {
			var x Value
			if err := x.UnmarshalJSON(r); err != nil {
				return err
			}
			m[k] = x
		}
		*v = ObjectValue(m)
	case '[':
		var raw []json.RawMessage
		if err := json.Unmarshal(b, &raw); err != nil {
			return err
		}
		list := make([]Value, len(raw))
		for i, r := range raw {
			if err := list[i].UnmarshalJSON(r); err != nil {
				return err
			}
		}
		*v = ListValue(list...)
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*v = StringValue(s)
	case 't', 'f', 'n':
		var x *bool
		if err := json.Unmarshal(b, &x); err != nil {
			return err
		}
		*v = StringValue("")
		if x != nil {
			*v = StringValue(strconv.FormatBool(*x))
		}
	default:
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return err
		}
		if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
			*v = IntValue(i)
		} else if f, err := strconv.ParseFloat(n.String(), 64); err == nil {
			*v = FloatValue(f)
		} else {
			*v = StringValue(n.String())
		}
	}
	return nil
}
