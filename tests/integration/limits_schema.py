#!/usr/bin/env python3
"""Validates JSON (one document, or JSON lines with --lines) against one of cage's JSON Schemas.

A small validator for the subset of JSON Schema 2020-12 that docs/schema/*.json use (type, const,
enum, properties, required, additionalProperties, items, pattern, minimum, maximum, allOf, if/then,
local $ref), so the tests need nothing beyond python3. Exits 1 naming the first violation.
usage: limits_schema.py SCHEMA FILE [--lines]
"""
import json
import re
import sys

TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def is_type(v, t):
    if t == "integer":
        return isinstance(v, int) and not isinstance(v, bool)
    if t == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    return isinstance(v, TYPES[t])


def errors(v, s, root, path="$"):
    if s is True:
        return []
    if "$ref" in s:
        node = root
        for part in s["$ref"].lstrip("#/").split("/"):
            node = node[part]
        return errors(v, node, root, path)
    out = []
    if "type" in s and not is_type(v, s["type"]):
        return [f"{path}: expected {s['type']}, got {json.dumps(v)[:80]}"]
    if "const" in s and v != s["const"]:
        out.append(f"{path}: expected {s['const']!r}, got {v!r}")
    if "enum" in s and v not in s["enum"]:
        out.append(f"{path}: {v!r} not in {s['enum']}")
    if isinstance(v, str) and "pattern" in s and not re.search(s["pattern"], v):
        out.append(f"{path}: {v!r} does not match {s['pattern']}")
    if is_type(v, "number"):
        if "minimum" in s and v < s["minimum"]:
            out.append(f"{path}: {v} < {s['minimum']}")
        if "maximum" in s and v > s["maximum"]:
            out.append(f"{path}: {v} > {s['maximum']}")
    if isinstance(v, dict):
        props = s.get("properties", {})
        for k in s.get("required", []):
            if k not in v:
                out.append(f"{path}: missing {k!r}")
        for k, x in v.items():
            if k in props:
                out += errors(x, props[k], root, f"{path}.{k}")
            elif s.get("additionalProperties") is False:
                out.append(f"{path}: unexpected property {k!r}")
    if isinstance(v, list) and "items" in s:
        for i, x in enumerate(v):
            out += errors(x, s["items"], root, f"{path}[{i}]")
    for sub in s.get("allOf", []):
        if "if" in sub:
            if not errors(v, sub["if"], root, path):
                out += errors(v, sub.get("then", True), root, path)
        else:
            out += errors(v, sub, root, path)
    return out


def main():
    schema = json.load(open(sys.argv[1]))
    text = open(sys.argv[2]).read()
    docs = [line for line in text.splitlines() if line.strip()] if "--lines" in sys.argv else [text]
    if not docs:
        print(f"{sys.argv[2]}: empty", file=sys.stderr)
        return 1
    for n, doc in enumerate(docs, 1):
        try:
            value = json.loads(doc)
        except ValueError as e:
            print(f"{sys.argv[2]}:{n}: not JSON: {e}", file=sys.stderr)
            return 1
        errs = errors(value, schema, schema)
        if errs:
            print(f"{sys.argv[2]}:{n}: {errs[0]}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
