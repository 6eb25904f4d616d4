#!/usr/bin/env python3
"""Checks JSON documents against a schema of openapi.yaml's components (JSON Schema 2020-12, as OpenAPI 3.1 has it).

Usage: openapi-schema-check.py OPENAPI_YAML < lines of "SchemaName<TAB>json"; prints one line per document:
"ok" or the first violation. The test suite uses it to hold real responses to the written contract.
"""
import json
import sys

import jsonschema
import yaml

with open(sys.argv[1], encoding="utf-8") as handle:
    document = yaml.safe_load(handle)
for line in sys.stdin:
    name, _, body = line.rstrip("\n").partition("\t")
    root = {"$ref": f"#/components/schemas/{name}", "components": document["components"]}
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(root).iter_errors(json.loads(body)))
    print("ok" if error is None else f"{'/'.join(map(str, error.absolute_path)) or '$'}: {error.message[:300]}")
    sys.stdout.flush()
