"""Opens an MCAP written by simrec with the Python `mcap` reader, decodes every message of
every topic (protobuf with `mcap-protobuf-support`, JSON with json.loads), and checks that
the values of simrec's own topics equal `simrec cat`'s records, value for value.

usage: mcap_check.py FILE.mcap CAT.ndjson
Prints one line `ok: N messages, C chunks, T topics, V values, M meshes` or exits 1 with why.

Each decoded message is turned back into records (time, channel, entity, frame, key, value)
with the channel metadata: a component's topic names the signal of each field
(`position.name` = `Vehicle.Nav.position`), a channel's topic its channel (`channel`), and
the fields' original keys (`<field>.name`). NanoVer's `particle.positions` is on
`/particles` (a PointCloud), not on `/frame`. NaN and ±Inf (JSON null in `cat`) are
compared as such; float32 fields as float32.

3es meshes: every persistent mesh shape of channel `3es/mesh_shape` (its Create, Vertices
and Indices records in `cat`, the source's own decode) must be drawn on `/3es/scene` as
entity `mesh_shape/<id>`: triangles as a triangle list with the same indices (or none when
the source sends none) and, for an unscaled shape, the same points (as float32); a point
mesh as points of a `/3es/points` cloud; and every mesh set whose resources are finalised
as entity `mesh_set/<id>` (or, of points, on `/3es/points`).
"""

import json
import math
import struct
import sys
from collections import Counter

from google.protobuf.json_format import MessageToDict
from mcap.decoder import DecoderFactory as McapDecoderFactory
from mcap.reader import make_reader
from mcap_protobuf.decoder import DecoderFactory as ProtobufDecoderFactory

FOXGLOVE = ("/particles", "/tf", "/3es/scene", "/3es/points")
CARRIED = "particle.positions"
EXTRA = "extra_json"


class JsonDecoderFactory(McapDecoderFactory):
    """The JSON message encoding: the Python reader has no decoder of its own for it."""

    def decoder_for(self, message_encoding, schema):
        if message_encoding == "json" and schema is not None and schema.encoding == "jsonschema":
            json.loads(schema.data)  # the schema itself must be JSON
            return json.loads
        return None


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def flat(value):
    if isinstance(value, list):
        return [y for x in value for y in flat(x)]
    return [value]


def norm(value, dtype):
    """A value as a comparable tuple: flat, float32 rounded, non-finite as 'nonfinite'."""
    if isinstance(value, dict):
        return (json.dumps(value, sort_keys=True),)
    out = []
    for x in flat(value):
        if isinstance(x, dict):
            out.append(json.dumps(x, sort_keys=True))
        elif x is None or (isinstance(x, float) and not math.isfinite(x)):
            out.append("nonfinite")
        elif isinstance(x, bool):
            out.append(int(x))
        elif isinstance(x, float) and dtype == "float32":
            out.append(f32(x))
        elif isinstance(x, (int, float)):
            out.append(float(x) if isinstance(x, float) or dtype in ("float32", "float64") else x)
        else:
            out.append(x)
    return tuple(out)


def plain(decoded):
    """A protobuf message as a dict of its fields, numbers as numbers."""
    return MessageToDict(decoded, preserving_proto_field_name=True, always_print_fields_with_no_presence=False)


def as_number(x, dtype):
    if isinstance(x, str) and dtype in ("int64", "uint64"):
        return int(x)
    if isinstance(x, str) and dtype in ("float32", "float64") and x in ("NaN", "Infinity", "-Infinity"):
        return float(x.replace("Infinity", "inf"))
    return x


def records_of(channel, message, dtypes):
    """(time, channel, entity, frame, key, value, dtype) of a decoded protobuf message."""
    meta = channel.metadata
    d = plain(message)
    time = int(d.pop("time_ns", 0))
    frame = int(d["frame"]) if "frame" in d else None
    d.pop("frame", None)
    component = meta.get("component")
    if "values.about" in meta:
        # Keyed values (keys not known up front): key -> JSON text.
        entity = int(d["entity"]) if "entity" in d else d.get("name")
        for key, text in d.get("values", {}).items():
            yield time, meta["channel"], entity, frame, key, norm(json.loads(text), None)
        return
    groups = [(None, d)]
    if "entities" in d:
        groups = [(e.pop("entity", None) or e.pop("name", None), e) for e in d["entities"]]
        groups = [(int(k) if isinstance(k, str) and k.isdigit() else k, e) for k, e in groups]
    for entity, fields in groups:
        fields.pop("entity", None)
        fields.pop("name", None) if "entities" in d else None
        # Values that did not fit the schema (a key first seen later, another type).
        extra = json.loads(fields.pop(EXTRA, "{}"))
        for key, value in extra.items():
            name = f"{component}.{key}" if component is not None else meta["channel"]
            dtype = dtypes.get((name, key))
            yield time, name, component if component is not None else entity, frame, key, norm(value, dtype)
        for field, value in fields.items():
            original = meta[f"{field}.name"]
            dtype = meta.get(f"{field}.dtype")
            if dtype == "json":
                value = json.loads(value)
            elif isinstance(value, list):
                value = [as_number(x, dtype) for x in value]
            else:
                value = as_number(value, dtype)
            if component is not None and f"{field}.axes" in meta:
                # A vector regrouped from per-axis signals (HDF5, CSV): one per axis.
                for axis, x in zip(meta[f"{field}.axes"].split(","), flat(value)):
                    yield time, f"{original}.{axis}", original, frame, axis, norm(x, dtype)
            elif component is not None:
                key = original[len(component) + 1:]
                yield time, original, component, frame, key, norm(value, dtype)
            else:
                yield time, meta["channel"], entity, frame, original, norm(value, dtype)


def main() -> int:
    path, cat_path = sys.argv[1], sys.argv[2]
    expected = Counter()
    with open(cat_path) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    got = Counter()
    dtypes = {}
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[JsonDecoderFactory(), ProtobufDecoderFactory()])
        summary = reader.get_summary()
        if summary is None or summary.statistics is None:
            print("no summary with statistics")
            return 1
        if not summary.chunk_indexes:
            print("no chunk indexes")
            return 1
        for cid, c in summary.channels.items():
            if summary.statistics.channel_message_counts.get(cid, 0) == 0:
                print(f"{c.topic}: a topic without messages")
                return 1
            if "." in c.topic:
                print(f"{c.topic}: a topic name with a dot")
                return 1
            for k, v in c.metadata.items():
                if k.endswith(".dtype"):
                    name = c.metadata[k[: -len(".dtype")] + ".name"]
                    axes = c.metadata.get(k[: -len(".dtype")] + ".axes")
                    if axes:
                        for axis in axes.split(","):
                            dtypes[(f"{name}.{axis}", axis)] = v
                    elif "component" in c.metadata:
                        dtypes[(name, name[len(c.metadata["component"]) + 1:])] = v
                    else:
                        dtypes[(c.metadata["channel"], name)] = v
        protobuf, total = 0, 0
        meshes = Meshes()
        for schema, channel, message, decoded in reader.iter_decoded_messages():
            total += 1
            if channel.message_encoding == "json":
                if "values" not in decoded or "time_ns" not in decoded:
                    print(f"{channel.topic}: message without time_ns and values")
                    return 1
                name = channel.metadata["channel"]
                for k, v in decoded["values"].items():
                    if isinstance(v, list) and not flat(v):
                        continue
                    got[(decoded["time_ns"], name, decoded.get("entity"), decoded.get("frame"), k, norm(v, None))] += 1
                continue
            protobuf += 1
            if channel.topic in FOXGLOVE:
                meshes.see(channel.topic, decoded)
                if type(decoded).__name__ not in ("PointCloud", "FrameTransforms", "SceneUpdate"):
                    print(f"{channel.topic}: decoded as {type(decoded).__name__}")
                    return 1
                continue
            for r in records_of(channel, decoded, dtypes):
                if r[-1] != ():  # an empty array: absent in protobuf, skipped in cat's too
                    got[r] += 1
    for line in lines:
        meshes.values("/" + line["channel"], line["values"])
        for k, v in line["values"].items():
            if k == CARRIED and isinstance(v, list):
                continue
            if isinstance(v, list) and not flat(v):
                # An empty array is an absent repeated field in protobuf.
                continue
            dtype = dtypes.get((line["channel"], k))
            expected[(line["time_ns"], line["channel"], line.get("entity"), line.get("frame"), k, norm(v, dtype))] += 1
    if total != summary.statistics.message_count:
        print(f"{total} messages read, statistics say {summary.statistics.message_count}")
        return 1
    if got != expected:
        missing = list((expected - got).items())[:3]
        extra = list((got - expected).items())[:3]
        print(f"values differ from cat: missing {missing}; not in cat {extra}")
        return 1
    why = meshes.check()
    if why:
        print(why)
        return 1
    print(
        f"ok: {total} messages, {len(summary.chunk_indexes)} chunks, {len(summary.channels)} topics, "
        f"{protobuf} protobuf, {sum(got.values())} values, {meshes.drawn()} meshes"
    )
    return 0


class Meshes:
    """3es mesh shapes and sets as `cat` gives them, and as /3es/scene draws them."""

    def __init__(self):
        self.shapes = {}  # object id -> {"topology", "unscaled", "vertices", "indices"}
        self.sets = {}  # object id -> resource ids
        self.finalised = set()
        self.entities = {}  # entity id -> last SceneEntity
        self.current = {}  # (channel, entity, time) -> values of the record being read
        self.points = 0  # the most points a /3es/points cloud held

    def see(self, topic, decoded):
        if topic == "/3es/scene":
            for e in decoded.entities:
                if e.id.startswith("mesh"):
                    self.entities[e.id] = e
        if topic == "/3es/points" and decoded.point_stride:
            self.points = max(self.points, len(decoded.data) // decoded.point_stride)

    def values(self, topic, v):
        message = v.get("message")
        if topic == "/3es/mesh" and message == "Finalise":
            self.finalised.add(v["mesh_id"])
        if topic == "/3es/mesh_set" and message == "Create" and v["object_id"]:
            self.sets[v["object_id"]] = flat(v.get("part_resource_ids", []))
        if topic != "/3es/mesh_shape" or not v.get("object_id"):
            return
        if message == "Create":
            self.shapes[v["object_id"]] = {
                "topology": v["topology"],
                "unscaled": flat(v["scale"]) == [1.0, 1.0, 1.0],
                "vertices": [],
                "indices": [],
            }
        elif message == "Data" and v["data_type"] in (0, 1) and v["object_id"] in self.shapes:
            key = "vertices" if v["data_type"] == 0 else "indices"
            items = [flat(x) for x in v["data"]]
            target = self.shapes[v["object_id"]][key]
            del target[v["offset"]:]
            target.extend(items)

    def drawn(self):
        return len(self.entities)

    def check(self):
        for oid, shape in self.shapes.items():
            if shape["topology"] == 0:
                # Point meshes are points of the frame's /3es/points cloud, not entities.
                if self.points < len(shape["vertices"]):
                    return f"mesh_shape {oid}: {len(shape['vertices'])} points, clouds of {self.points}"
                continue
            e = self.entities.get(f"mesh_shape/{oid}")
            if e is None:
                return f"mesh_shape {oid} not drawn on /3es/scene"
            if shape["topology"] != 2:
                continue
            if len(e.triangles) != 1:
                return f"mesh_shape {oid}: {len(e.triangles)} triangle lists"
            t = e.triangles[0]
            if list(t.indices) != [i for x in shape["indices"] for i in x]:
                return f"mesh_shape {oid}: indices {list(t.indices)} != {shape['indices']}"
            points = [[f32(p.x), f32(p.y), f32(p.z)] for p in t.points]
            if shape["unscaled"] and points != shape["vertices"]:
                return f"mesh_shape {oid}: points {points} != {shape['vertices']}"
        for oid, resources in self.sets.items():
            if resources and all(r in self.finalised for r in resources):
                if f"mesh_set/{oid}" not in self.entities and not self.points:
                    return f"mesh_set {oid} (resources {resources}, finalised) not drawn"
        return None


if __name__ == "__main__":
    sys.exit(main())
