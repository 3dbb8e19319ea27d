#!/usr/bin/env python3
"""Checks `hetcast ... --json` documents against docs/schema, and docs/json.md against the schemas.

  json_schema.py SCHEMA_DIR validate NAME FILE   FILE is a valid NAME document (NAME: push, plan, map-show...)
  json_schema.py SCHEMA_DIR reject NAME FILE     FILE is not one (exit 1 when the schema accepts it)
  json_schema.py SCHEMA_DIR docs JSON_MD         every field json.md lists is in its schema and the reverse

A failure prints one line naming the field and exits 1; a usage error exits 2.
"""
import json
import pathlib
import re
import sys

import jsonschema
from referencing import Registry, Resource


def load(schema_dir):
    schemas = {p.stem: json.loads(p.read_text()) for p in sorted(pathlib.Path(schema_dir).glob("*.json"))}
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas.values())
    return schemas, registry


def errors(schemas, registry, name, doc):
    jsonschema.Draft202012Validator.check_schema(schemas[name])
    v = jsonschema.Draft202012Validator(schemas[name], registry=registry)
    return sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path))


def where(e):
    return "/".join(str(p) for p in e.absolute_path) or "(top)"


def fields(schema, prefix=""):
    """Every property path of `schema` ("reports", "outcomes[].dest"), stopping at $refs."""
    out = set()
    for name, sub in schema.get("properties", {}).items():
        path = prefix + name
        out.add(path)
        out |= nested(sub, path)
    return out


def nested(sub, path):
    if "$ref" in sub:
        return set()
    out = set()
    for branch in sub.get("oneOf", []):
        out |= nested(branch, path)
    if "properties" in sub:
        out |= fields(sub, path + ".")
    if "items" in sub:
        out |= nested(sub["items"], path + "[]")
    return out


def documented(json_md):
    """{schema name: set of field paths} from the tables after each <!-- schema: NAME --> marker."""
    tables, current = {}, None
    for line in pathlib.Path(json_md).read_text().splitlines():
        m = re.match(r"<!-- schema: (\S+) -->", line)
        if m:
            current = tables.setdefault(m.group(1), set())
            continue
        if current is None:
            continue
        m = re.match(r"\|\s*`([^`]+)`\s*\|", line)
        if m:
            current.add(m.group(1))
        elif not line.startswith("|") and line.strip():
            current = None
    return tables


def check_docs(schemas, json_md):
    tables = documented(json_md)
    problems = []
    for key, listed in sorted(tables.items()):
        file, _, part = key.partition("#")
        if file not in schemas:
            problems.append(f"{json_md}: a table for '{key}', which has no schema")
            continue
        schema = schemas[file]["$defs"][part] if part else schemas[file]
        actual = fields(schema)
        problems += [f"{key}: '{f}' is documented but not in the schema" for f in sorted(listed - actual)]
        problems += [f"{key}: '{f}' is in the schema but not documented" for f in sorted(actual - listed)]
    wanted = {n for n in schemas if n != "common"} | {"common#" + d for d in schemas["common"]["$defs"]}
    problems += [f"{json_md}: no table for '{n}'" for n in sorted(wanted - set(tables))]
    return problems


def main(argv):
    if len(argv) != 5 and not (len(argv) == 4 and argv[2] == "docs"):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    schemas, registry = load(argv[1])
    if argv[2] == "docs":
        problems = check_docs(schemas, argv[3])
        for p in problems:
            print(p, file=sys.stderr)
        return 1 if problems else 0
    mode, name, file = argv[2:]
    if mode not in ("validate", "reject") or name not in schemas:
        print(f"json_schema.py: unknown mode '{mode}' or schema '{name}'", file=sys.stderr)
        return 2
    try:
        doc = json.loads(pathlib.Path(file).read_bytes())
    except (OSError, ValueError) as e:
        print(f"{file}: not JSON: {e}", file=sys.stderr)
        return 1
    errs = errors(schemas, registry, name, doc)
    if mode == "validate" and errs:
        print(f"{file}: not a valid '{name}' document: at {where(errs[0])}: {errs[0].message[:300]}", file=sys.stderr)
        return 1
    if mode == "reject" and not errs:
        print(f"{file}: the '{name}' schema accepts it but should not", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
