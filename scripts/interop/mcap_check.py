"""Opens an MCAP written by simrec with the Python `mcap` reader (and decodes its protobuf
topics with `mcap-protobuf-support`), and checks it against simrec's own inspect counts.

usage: mcap_check.py FILE.mcap INSPECT.jsonl
Prints one line `ok: N messages, C chunks, T topics, P protobuf, M meshes` or exits 1 with why.

3es meshes: every persistent mesh shape of the JSON topic `/3es/mesh_shape` (its Create,
Vertices and Indices messages, the source's own decode) must be drawn on `/3es/scene` as
entity `mesh_shape/<id>`: triangles as a triangle list with the same indices (or none when
the source sends none) and, for an unscaled shape, the same points (as float32); and every
mesh set whose resources are finalised as entity `mesh_set/<id>`.
"""

import json
import struct
import sys

from mcap.decoder import DecoderFactory as McapDecoderFactory
from mcap.reader import make_reader
from mcap_protobuf.decoder import DecoderFactory as ProtobufDecoderFactory


class JsonDecoderFactory(McapDecoderFactory):
    """The JSON message encoding: the Python reader has no decoder of its own for it."""

    def decoder_for(self, message_encoding, schema):
        if message_encoding == "json" and schema is not None and schema.encoding == "jsonschema":
            json.loads(schema.data)  # the schema itself must be JSON
            return json.loads
        return None


def main() -> int:
    path, inspect_path = sys.argv[1], sys.argv[2]
    expected = {}
    with open(inspect_path) as f:
        for line in f:
            if line.strip():
                for c in json.loads(line)["channels"]:
                    if c["records"]:
                        expected["/" + c["name"]] = expected.get("/" + c["name"], 0) + c["records"]
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[JsonDecoderFactory(), ProtobufDecoderFactory()])
        summary = reader.get_summary()
        if summary is None or summary.statistics is None:
            print("no summary with statistics")
            return 1
        if not summary.chunk_indexes:
            print("no chunk indexes")
            return 1
        counts, protobuf, total = {}, 0, 0
        meshes = Meshes()
        for schema, channel, message, decoded in reader.iter_decoded_messages():
            total += 1
            meshes.see(channel.topic, decoded)
            if channel.message_encoding == "json":
                counts[channel.topic] = counts.get(channel.topic, 0) + 1
                if "values" not in decoded or "time_ns" not in decoded:
                    print(f"{channel.topic}: message without time_ns and values")
                    return 1
            elif channel.message_encoding == "protobuf":
                protobuf += 1
                if type(decoded).__name__ not in ("PointCloud", "FrameTransforms", "SceneUpdate"):
                    print(f"{channel.topic}: decoded as {type(decoded).__name__}")
                    return 1
    if total != summary.statistics.message_count:
        print(f"{total} messages read, statistics say {summary.statistics.message_count}")
        return 1
    if counts != expected:
        print(f"messages per topic {counts} != inspect's records per channel {expected}")
        return 1
    why = meshes.check()
    if why:
        print(why)
        return 1
    print(
        f"ok: {total} messages, {len(summary.chunk_indexes)} chunks, {len(counts)} topics, "
        f"{protobuf} protobuf, {meshes.drawn()} meshes"
    )
    return 0


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def flat(value):
    if isinstance(value, list):
        return [y for x in value for y in flat(x)]
    return [value]


class Meshes:
    """3es mesh shapes and sets as the JSON topics give them, and as /3es/scene draws them."""

    def __init__(self):
        self.shapes = {}  # object id -> {"topology", "unscaled", "vertices", "indices"}
        self.sets = {}  # object id -> resource ids
        self.finalised = set()
        self.entities = {}  # entity id -> last SceneEntity

    def see(self, topic, decoded):
        if topic == "/3es/scene":
            for e in decoded.entities:
                if e.id.startswith("mesh"):
                    self.entities[e.id] = e
            return
        if topic not in ("/3es/mesh_shape", "/3es/mesh_set", "/3es/mesh"):
            return
        v = decoded["values"]
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
                if f"mesh_set/{oid}" not in self.entities:
                    return f"mesh_set {oid} (resources {resources}, finalised) not drawn"
        return None


if __name__ == "__main__":
    sys.exit(main())
