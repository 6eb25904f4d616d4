"""Checks Kubernetes manifests offline: each document against the Kubernetes schemas (kubernetes-validate, strict,
for a given version) and each workload for the settings docs/operations.md "Deploying" promises. Prints JSON:
{"documents": [{"file", "kind", "name", "errors": [...], "facts": {...}}]}.

usage: kubernetes_check.py VERSION FILE...
"""
import json
import sys

import kubernetes_validate
import yaml


def facts(document):
    """What the tests assert about a workload: security settings, probes, resources, secrets as files."""
    spec = document.get("spec", {})
    pod = spec.get("template", {}).get("spec", {})
    containers = pod.get("containers", [])
    result = {
        "runAsNonRoot": pod.get("securityContext", {}).get("runAsNonRoot"),
        "readOnlyRootFilesystem": all(c.get("securityContext", {}).get("readOnlyRootFilesystem") for c in containers),
        "dropsAllCapabilities": all("ALL" in c.get("securityContext", {}).get("capabilities", {}).get("drop", []) for c in containers),
        "probes": sorted({p for c in containers for p in ("readinessProbe", "livenessProbe", "startupProbe") if p in c}),
        "requests": all("requests" in c.get("resources", {}) and "memory" in c.get("resources", {}).get("limits", {}) for c in containers),
        "args": [c.get("args", []) for c in containers],
        "secretsInEnv": [e["name"] for c in containers for e in c.get("env", []) if "valueFrom" in e],
        "replicas": spec.get("replicas"),
    }
    return result


def main():
    version, files = sys.argv[1], sys.argv[2:]
    out = []
    for path in files:
        with open(path) as handle:
            for document in yaml.safe_load_all(handle):
                if not document:
                    continue
                entry = {"file": path, "kind": document.get("kind"), "name": document.get("metadata", {}).get("name"), "errors": []}
                try:
                    kubernetes_validate.validate(document, version, strict=True)
                except kubernetes_validate.ValidationError as error:
                    entry["errors"].append(f"{'.'.join(str(p) for p in error.path)}: {error.message}")
                except Exception as error:  # an unknown kind or version is a failure too
                    entry["errors"].append(repr(error))
                if entry["kind"] in ("Deployment", "Job"):
                    entry["facts"] = facts(document)
                if entry["kind"] == "NetworkPolicy":
                    entry["facts"] = {"ingress": document.get("spec", {}).get("ingress", [])}
                if entry["kind"] == "Service":
                    entry["facts"] = {"ports": [p.get("targetPort") for p in document.get("spec", {}).get("ports", [])]}
                out.append(entry)
    print(json.dumps({"documents": out}))


main()
