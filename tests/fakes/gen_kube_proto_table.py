#!/usr/bin/env python3
"""Writes the protobuf field table of the fake Kubernetes API server from the Go API types.

    gen_kube_proto_table.py K8S_API_DIR APIMACHINERY_DIR [SOURCE] > fake_kube_proto_table.inc

Reads the struct tags of k8s.io/api (core/v1, batch/v1, rbac/v1, authentication/v1) and of
k8s.io/apimachinery's meta/v1: `json:"NAME,omitempty" protobuf:"WIRE,NUMBER,..."`, and emits, for
every message reachable from the kinds kubectl's typed commands send (ROOTS), one row per field,
for fake_kube_proto.cpp. SOURCE (e.g. the two commits) is recorded in the header. Protobuf field
numbers never change, so a table from a newer k8s.io/api reads what an older kubectl sends.
"""
import os
import re
import sys

api_dir, mach_dir = sys.argv[1], sys.argv[2]
source = sys.argv[3] if len(sys.argv) > 3 else ""
FILES = {
    "core": ["core/v1/types.go", "core/v1/toleration.go", "core/v1/taint.go"],
    "batch": ["batch/v1/types.go"],
    "rbac": ["rbac/v1/types.go"],
    "authentication": ["authentication/v1/types.go"],
}
QUAL = {"corev1": "core", "v1": "core", "metav1": "meta", "batchv1": "batch", "rbacv1": "rbac"}
ROOTS = [
    "core.Pod", "core.Namespace", "core.ServiceAccount", "core.Secret", "core.ConfigMap",
    "core.Service", "batch.Job", "batch.CronJob", "rbac.Role", "rbac.RoleBinding",
    "rbac.ClusterRole", "rbac.ClusterRoleBinding", "authentication.TokenRequest",
    "meta.DeleteOptions",
]
SPECIAL = {
    "meta.Time": "Time", "meta.MicroTime": "Time", "resource.Quantity": "Quantity",
    "intstr.IntOrString": "IntOrString", "runtime.RawExtension": "Raw", "meta.FieldsV1": "Raw",
    "types.UID": "String", "meta.Duration": "Unsupported", "meta.TypeMeta": "Skip",
    "meta.ListMeta": "Unsupported",
}
# The in-tree volume plugins of other clouds and storage systems (deprecated or removed): a body
# using one is refused rather than read half.
PRUNED = {
    "core." + n + "VolumeSource" for n in (
        "AWSElasticBlockStore", "AzureDisk", "AzureFile", "CephFS", "Cinder", "FC", "FlexVolume",
        "Flocker", "GCEPersistentDisk", "GitRepo", "Glusterfs", "ISCSI", "PhotonPersistentDisk",
        "Portworx", "Quobyte", "RBD", "ScaleIO", "StorageOS", "VsphereVirtualDisk")
}
INTS = {"int", "int32", "int64", "uint32", "uint64", "uint16", "uint8", "int16", "int8", "uint"}

structs = {}  # "pkg.Name" -> [(name, gotype, tags)]
aliases = {}  # "pkg.Name" -> gotype


def parse(pkg, text):
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^type (\w+) struct \{\s*$", line)
        if m:
            fields = []
            i += 1
            while not lines[i].startswith("}"):
                fl = lines[i].strip()
                i += 1
                if not fl or fl.startswith("//"):
                    continue
                fm = re.match(r"^(?:(\w+)\s+)?([^\s`]+)\s+`(.*)`", fl)
                if fm:
                    fields.append((fm.group(1), fm.group(2), fm.group(3)))
            structs[pkg + "." + m.group(1)] = fields
        else:
            m = re.match(r"^type (\w+) (?:= )?([^\s{]+)\s*(//.*)?$", line)
            if m and m.group(2) not in ("interface",):
                aliases[pkg + "." + m.group(1)] = m.group(2)
        i += 1


for pkg, files in FILES.items():
    for f in files:
        with open(os.path.join(api_dir, f)) as fh:
            parse(pkg, fh.read())
with open(os.path.join(mach_dir, "pkg/apis/meta/v1/types.go")) as fh:
    parse("meta", fh.read())


def qualify(name, pkg):
    if "." in name:
        q, n = name.split(".", 1)
        return QUAL.get(q, q) + "." + n
    return pkg + "." + name


def kind_of(gotype, pkg):
    """(kind, message, repeated, map_value_kind) for a Go type."""
    t = gotype.lstrip("*")
    if t == "[]byte":
        return ("Bytes", "", False)
    if t.startswith("[]"):
        k, msg, rep = kind_of(t[2:], pkg)
        assert not rep, gotype
        return (k, msg, True)
    m = re.match(r"^map\[([^\]]+)\](.+)$", t)
    if m:
        k, msg, rep = kind_of(m.group(2), pkg)
        if rep or k not in ("String", "Bytes", "Quantity"):
            return ("Unsupported", "", False)
        return ("Map" + k, "", False)
    if t == "string":
        return ("String", "", False)
    if t == "bool":
        return ("Bool", "", False)
    if t in INTS:
        return ("Int", "", False)
    q = qualify(t, pkg)
    if q in SPECIAL:
        return (SPECIAL[q], "", False)
    if q in PRUNED:
        return ("Unsupported", "", False)
    if q in structs:
        return ("Message", q, False)
    if q in aliases:
        return kind_of(aliases[q], q.split(".")[0])
    return ("Unsupported", "", False)


rows = []
seen = set()
queue = list(ROOTS)
while queue:
    msg = queue.pop(0)
    if msg in seen:
        continue
    seen.add(msg)
    pkg = msg.split(".")[0]
    for name, gotype, tags in structs[msg]:
        pm = re.search(r'protobuf:"(\w+),(\d+),(\w+),name=(\w+)', tags)
        jm = re.search(r'json:"([^"]*)"', tags)
        if not pm or not jm:
            continue
        jparts = jm.group(1).split(",")
        jname = jparts[0]
        omitempty = "omitempty" in jparts[1:]
        inline = "inline" in jparts[1:]
        kind, sub, rep = kind_of(gotype, pkg)
        if kind == "Skip":
            continue
        if jname == "status" and msg in ROOTS:
            kind, sub, rep = "Ignore", "", False
        if kind == "Message" and sub not in seen:
            queue.append(sub)
        pointer = gotype.startswith("*")
        keep_zero = pointer or not omitempty
        rows.append((msg, int(pm.group(2)), jname, kind, sub, rep, keep_zero, inline))

print("// Generated by tests/fakes/gen_kube_proto_table.py from the struct tags of k8s.io/api and")
print("// k8s.io/apimachinery (meta/v1): message, field number, JSON name, kind, message type,")
print("// repeated, keep a zero value (a pointer, or no omitempty), inlined. Do not edit by hand.")
if source:
    print("// Source: " + source)
for msg, num, jname, kind, sub, rep, keep, inline in rows:
    print('{"%s", %d, "%s", K::%s, "%s", %s, %s, %s},' % (
        msg, num, jname, kind, sub, "true" if rep else "false",
        "true" if keep else "false", "true" if inline else "false"))
