"""Opens an MCAP written by simrec with the Python `mcap` reader (and decodes its protobuf
topics with `mcap-protobuf-support`), and checks it against simrec's own inspect counts.

usage: mcap_check.py FILE.mcap INSPECT.jsonl
Prints one line `ok: N messages, C chunks, T topics, P protobuf` or exits 1 with why.
"""

import json
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
        for schema, channel, message, decoded in reader.iter_decoded_messages():
            total += 1
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
    print(f"ok: {total} messages, {len(summary.chunk_indexes)} chunks, {len(counts)} topics, {protobuf} protobuf")
    return 0


if __name__ == "__main__":
    sys.exit(main())
