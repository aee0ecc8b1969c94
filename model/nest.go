package model

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// NestMeta nests flat "a/b" fields (the store's and the record's form)
// into Meta: an object whose keys are exactly "0".."n-1" becomes a list,
// and a name that is both a value and an object ("a" and "a/b") keeps
// the value under "" ({"a": {"": …, "b": …}}). The top level is always an
// object.
//
// leaf makes each value from its string; it is given the field's
// pattern, its name with every list index written "*"
// ("fileinfo/streamdetails/video/*/width", "episodes/*"); a value kept
// under "" has its name's pattern ("a" for {"a": {"": …}}). nil leaves
// every value a string.
func NestMeta(flat map[string]string, leaf func(pattern, s string) Value) Meta {
	if leaf == nil {
		leaf = func(_, s string) Value { return StringValue(s) }
	}
	root := &nest{}
	for _, k := range slices.Sorted(maps.Keys(flat)) {
		parts := strings.Split(k, "/")
		n := root
		for _, p := range parts[:len(parts)-1] {
			n = n.child(p)
		}
		n.set(parts[len(parts)-1], flat[k])
	}
	return root.object("", leaf)
}

// nest is one object under construction: its children by name, each a
// value (value set) or an object (kids set).
type nest struct {
	kids map[string]*nest
	// value is a leaf's string; isValue says whether it is one.
	value   string
	isValue bool
}

// child is the object named p, made when missing; a value of that name
// becomes the object's "" member.
func (n *nest) child(p string) *nest {
	if n.kids == nil {
		n.kids = map[string]*nest{}
	}
	c := n.kids[p]
	switch {
	case c == nil:
		c = &nest{}
		n.kids[p] = c
	case c.isValue:
		n.kids[p] = &nest{kids: map[string]*nest{"": c}}
		c = n.kids[p]
	}
	return c
}

// set sets the value named p; an object of that name keeps it under "".
func (n *nest) set(p, s string) {
	if n.kids == nil {
		n.kids = map[string]*nest{}
	}
	v := &nest{value: s, isValue: true}
	if c := n.kids[p]; c != nil && !c.isValue {
		c.kids[""] = v
		return
	}
	n.kids[p] = v
}

// object is n's members as Meta; pattern is n's own pattern ("" at the
// top level).
func (n *nest) object(pattern string, leaf func(pattern, s string) Value) Meta {
	m := make(Meta, len(n.kids))
	for k, c := range n.kids {
		// A value kept under "" is the name's own: it has the name's
		// pattern.
		p := pattern
		switch {
		case pattern == "":
			p = k
		case k != "":
			p = pattern + "/" + k
		}
		m[k] = c.valueOf(p, leaf)
	}
	return m
}

// valueOf is n as a Value of the given pattern: a leaf, a list (its
// members keyed exactly 0..n-1) or an object.
func (n *nest) valueOf(pattern string, leaf func(pattern, s string) Value) Value {
	if n.isValue {
		return leaf(pattern, n.value)
	}
	if n.isList() {
		list := make([]Value, len(n.kids))
		for k, c := range n.kids {
			i, _ := strconv.Atoi(k)
			list[i] = c.valueOf(pattern+"/*", leaf)
		}
		return ListValue(list...)
	}
	return ObjectValue(n.object(pattern, leaf))
}

// isList reports whether n's members are keyed exactly "0".."len-1".
func (n *nest) isList() bool {
	if len(n.kids) == 0 {
		return false
	}
	for k := range n.kids {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i >= len(n.kids) || strconv.Itoa(i) != k {
			return false
		}
	}
	return true
}

// FlattenMeta is the inverse of NestMeta: m's values as flat fields, a
// nested name joined with "/" and a list's elements named by their index
// ("fileinfo/streamdetails/audio/0/channels"), a value kept under "" as
// its name's own. A number is written as the node's JSON writes it (a
// whole one as an integer, 3000000, however it was read), a string as it
// is; so a field the node typed reads back as the store keeps it, but for
// times, which stay RFC 3339 text (mtime). metamesh lookup reads a
// document's summary from them (store.SummaryOfFields).
func FlattenMeta(m Meta) map[string]string {
	out := make(map[string]string, len(m))
	flattenInto(out, "", ObjectValue(m))
	return out
}

// flattenInto adds v, named name, to out.
func flattenInto(out map[string]string, name string, v Value) {
	switch v.Kind {
	case KindObject:
		for k, x := range v.Object {
			flattenInto(out, joinName(name, k), x)
		}
	case KindList:
		for i, x := range v.List {
			flattenInto(out, joinName(name, strconv.Itoa(i)), x)
		}
	case KindInt:
		out[name] = strconv.FormatInt(v.Int, 10)
	case KindFloat:
		b, err := appendFloat(nil, v.Float)
		if err != nil { // NaN or an infinity, which JSON cannot carry
			b = strconv.AppendFloat(nil, v.Float, 'g', -1, 64)
		}
		out[name] = string(b)
	default:
		out[name] = v.Str
	}
}

// joinName is the flat name of member k of the object named name: a
// member "" is the name's own value (NestMeta keeps it so).
func joinName(name, k string) string {
	switch {
	case k == "":
		return name
	case name == "":
		return k
	}
	return name + "/" + k
}
