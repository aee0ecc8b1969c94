package store

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
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
