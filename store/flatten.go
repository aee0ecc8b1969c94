package store

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Flatten turns a nested value into flat "a/b/0/c" → string pairs: nested
// objects join with "/", arrays use indices 0,1,2…, null becomes "",
// numbers and booleans their string form. A scalar at the top level is
// stored under prefix (which must then be non-empty).
func Flatten(prefix string, v any) map[string]string {
	out := map[string]string{}
	flattenInto(out, prefix, reflect.ValueOf(v))
	return out
}

func flattenInto(out map[string]string, key string, v reflect.Value) {
	join := func(k string) string {
		if key == "" {
			return k
		}
		return key + "/" + k
	}
	for v.IsValid() && (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer) {
		if v.IsNil() {
			out[key] = ""
			return
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		out[key] = ""
		return
	}
	if n, ok := v.Interface().(json.Number); ok {
		out[key] = n.String()
		return
	}
	switch v.Kind() {
	case reflect.Map:
		for _, k := range v.MapKeys() {
			flattenInto(out, join(fmt.Sprint(k.Interface())), v.MapIndex(k))
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			out[key] = string(v.Bytes())
			return
		}
		for i := 0; i < v.Len(); i++ {
			flattenInto(out, join(strconv.Itoa(i)), v.Index(i))
		}
	case reflect.String:
		out[key] = v.String()
	case reflect.Bool:
		out[key] = strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		out[key] = strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		out[key] = strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		out[key] = strconv.FormatFloat(v.Float(), 'f', -1, 64)
	default:
		out[key] = fmt.Sprint(v.Interface())
	}
}

// Unflatten nests flat "a/b" keys into objects. An object whose keys are
// exactly "0".."n-1" becomes an array. When a key is both a value and an
// object ("a" and "a/b"), the object wins and the value is kept under the
// empty key ("a": {"": …, "b": …}).
func Unflatten(flat map[string]string) map[string]any {
	keys := make([]string, 0, len(flat))
	for k := range flat {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	root := map[string]any{}
	for _, k := range keys {
		parts := strings.Split(k, "/")
		m := root
		for _, p := range parts[:len(parts)-1] {
			switch cur := m[p].(type) {
			case map[string]any:
				m = cur
			case string:
				next := map[string]any{"": cur}
				m[p] = next
				m = next
			default:
				next := map[string]any{}
				m[p] = next
				m = next
			}
		}
		last := parts[len(parts)-1]
		if sub, ok := m[last].(map[string]any); ok {
			sub[""] = flat[k]
		} else {
			m[last] = flat[k]
		}
	}
	return arrays(root)
}

// arrays turns nested objects keyed exactly 0..n-1 into slices, depth
// first. The top level always stays an object.
func arrays(m map[string]any) map[string]any {
	for k, c := range m {
		if sub, ok := c.(map[string]any); ok {
			sub = arrays(sub)
			if a, ok := asArray(sub); ok {
				m[k] = a
			} else {
				m[k] = sub
			}
		}
	}
	return m
}

func asArray(m map[string]any) ([]any, bool) {
	if len(m) == 0 {
		return nil, false
	}
	out := make([]any, len(m))
	for k, v := range m {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i >= len(m) || strconv.Itoa(i) != k {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}
