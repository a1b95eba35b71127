#!/usr/bin/env python3
"""Oracle for the provider's instance-type preview (issue 39).

Computes, for each requirement set in cases.json, which instance types of Karpenter's generated
instance-type reference the set selects, straight from the shared files (no code of the
provider), and writes expected.json. The provider's tests compare its answers with that file.

The semantics are restated here from kubernetes-sigs/karpenter pkg/scheduling (requirement.go,
requirements.go) and pkg/cloudprovider/types.go (SatisfiesMinValues), independently of the
Rust code:

  * an instance type carries one requirement per label key Karpenter sets: `In [value]` when
    the type has the label, `DoesNotExist` when it does not (GPU labels on a type without GPUs);
  * a pool's requirements on one key are intersected (Gt n becomes >= n+1, Lt n <= n-1; crossed
    bounds become DoesNotExist; bounds are dropped from plain In sets);
  * a type fits when, for every key both sides have, the two intersect; when they do not, it
    still fits if both read as NotIn or DoesNotExist;
  * minValues on a key is met when the selected types have at least that many distinct values.

Only keys the reference describes take part: node.kubernetes.io/instance-type,
kubernetes.io/arch (and their beta aliases), karpenter.k8s.aws/instance-* (self-managed
pools), eks.amazonaws.com/instance-* for the labels EKS Auto Mode shares (Auto Mode pools).

Usage: python3 oracle.py [REFERENCE_DIR]   (default: ../shared/karpenter/reference/instance-types
beside the repository)
"""

import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))

AUTO_MODE_SHARED = {
    "instance-category", "instance-family", "instance-generation", "instance-size",
    "instance-cpu", "instance-cpu-manufacturer", "instance-cpu-sustained-clock-speed-mhz",
    "instance-memory", "instance-ebs-bandwidth", "instance-network-bandwidth",
    "instance-gpu-name", "instance-gpu-manufacturer", "instance-gpu-count",
    "instance-gpu-memory", "instance-local-nvme", "instance-hypervisor",
    "instance-encryption-in-transit-supported",
}
ALIASES = {
    "beta.kubernetes.io/arch": "kubernetes.io/arch",
    "beta.kubernetes.io/instance-type": "node.kubernetes.io/instance-type",
}


def read_reference(directory):
    files = glob.glob(os.path.join(directory, "instance-types-v*.md"))
    if len(files) != 1:
        sys.exit(f"expected one instance-types-v*.md in {directory}, found {files}")
    types = []
    current = None
    in_labels = False
    with open(files[0], encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("### "):
                current = {"name": line[4:].strip().strip("`"), "labels": {}}
                types.append(current)
                in_labels = False
            elif line.strip() == "#### Labels":
                in_labels = True
            elif line.strip().startswith("####"):
                in_labels = False
            elif in_labels and line.strip().startswith("|"):
                parts = line.strip().split("|")
                # ['', key, value, '']
                if len(parts) == 4 and parts[1] not in ("Label", "--"):
                    current["labels"][parts[1]] = parts[2]
    return types


def label_key(key, flavor, known_keys):
    """The reference's label key a requirement key stands for, or None (left alone)."""
    key = ALIASES.get(key, key)
    if key in ("node.kubernetes.io/instance-type", "kubernetes.io/arch"):
        return key
    if key.startswith("karpenter.k8s.aws/instance-") and flavor != "auto-mode":
        return key if key in known_keys else None
    if key.startswith("eks.amazonaws.com/") and flavor != "self-managed":
        rest = key[len("eks.amazonaws.com/"):]
        if rest in AUTO_MODE_SHARED and "karpenter.k8s.aws/" + rest in known_keys:
            return "karpenter.k8s.aws/" + rest
    return None


def as_int(text):
    try:
        return int(text)  # Python's int() takes "+5" and "-3" like Go's strconv.Atoi
    except ValueError:
        return None


class Req:
    """Karpenter's Requirement: a (possibly complemented) value set with inclusive bounds."""

    def __init__(self, complement, values, gte=None, lte=None, min_values=None):
        self.complement = complement
        self.values = set(values)
        self.gte = gte
        self.lte = lte
        self.min_values = min_values

    @staticmethod
    def build(operator, values, min_values):
        if operator == "In":
            return Req(False, values, min_values=min_values)
        if operator == "NotIn":
            return Req(True, values, min_values=min_values)
        if operator == "Exists":
            return Req(True, [], min_values=min_values)
        if operator == "DoesNotExist":
            return Req(False, [], min_values=min_values)
        n = as_int(values[0])
        if operator == "Gt":
            return Req(True, [], gte=n + 1, min_values=min_values)
        if operator == "Lt":
            return Req(True, [], lte=n - 1, min_values=min_values)
        if operator == "Gte":
            return Req(True, [], gte=n, min_values=min_values)
        if operator == "Lte":
            return Req(True, [], lte=n, min_values=min_values)
        raise ValueError(operator)

    def in_bounds(self, value, gte, lte):
        if gte is None and lte is None:
            return True
        n = as_int(value)
        if n is None:
            return False
        return (gte is None or n >= gte) and (lte is None or n <= lte)

    def intersection(self, other):
        pick = lambda f, a, b: b if a is None else a if b is None else f(a, b)
        gte = pick(max, self.gte, other.gte)
        lte = pick(min, self.lte, other.lte)
        min_values = pick(max, self.min_values, other.min_values)
        if gte is not None and lte is not None and gte > lte:
            return Req(False, [], min_values=min_values)
        if self.complement and other.complement:
            values = self.values | other.values
        elif self.complement:
            values = other.values - self.values
        elif other.complement:
            values = self.values - other.values
        else:
            values = self.values & other.values
        values = {v for v in values if self.in_bounds(v, gte, lte)}
        complement = self.complement and other.complement
        if not complement:
            gte = lte = None
        return Req(complement, values, gte, lte, min_values)

    def operator(self):
        if self.complement:
            return "NotIn" if self.values else "Exists"
        return "In" if self.values else "DoesNotExist"

    def has_intersection(self, other):
        pick = lambda f, a, b: b if a is None else a if b is None else f(a, b)
        gte = pick(max, self.gte, other.gte)
        lte = pick(min, self.lte, other.lte)
        if gte is not None and lte is not None and gte > lte:
            return False
        if self.complement and other.complement:
            return True
        if self.complement:
            return any(v not in self.values and self.in_bounds(v, gte, lte) for v in other.values)
        if other.complement:
            return any(v not in other.values and self.in_bounds(v, gte, lte) for v in self.values)
        return any(v in other.values and self.in_bounds(v, gte, lte) for v in self.values)


def instance_requirement(instance, key):
    value = instance["labels"].get(key)
    return Req(False, [value]) if value is not None else Req(False, [])


def fits(instance, pool):
    for key, incoming in pool.items():
        existing = instance_requirement(instance, key)
        if existing.has_intersection(incoming):
            continue
        if incoming.operator() in ("NotIn", "DoesNotExist") and existing.operator() in ("NotIn", "DoesNotExist"):
            continue
        return False
    return True


def evaluate(types, known_keys, case):
    flavor = case.get("flavor", "either")
    pool = {}
    for r in case["requirements"]:
        key = label_key(r["key"], flavor, known_keys)
        if key is None:
            continue
        req = Req.build(r["operator"], r.get("values", []), r.get("min_values"))
        pool[key] = req.intersection(pool[key]) if key in pool else req
    selected = [t for t in types if fits(t, pool)]
    unmet = {}
    for key, req in pool.items():
        if req.min_values is None:
            continue
        found = {t["labels"][key] for t in selected if key in t["labels"]}
        if len(found) < req.min_values:
            unmet[key] = len(found)
    result = {"name": case["name"], "count": len(selected), "min_values_unmet": unmet}
    if len(selected) <= 25:
        result["names"] = sorted(t["name"] for t in selected)
    return result


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        REPO, "..", "shared", "karpenter", "reference", "instance-types")
    types = read_reference(directory)
    known_keys = {k for t in types for k in t["labels"]}
    with open(os.path.join(HERE, "cases.json"), encoding="utf-8") as f:
        cases = json.load(f)
    results = [evaluate(types, known_keys, c) for c in cases]
    out = {"instance_types": len(types), "cases": results}
    with open(os.path.join(HERE, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"{len(results)} cases over {len(types)} instance types -> expected.json")


if __name__ == "__main__":
    main()
