"""Opens .nanover.zip files with NanoVer's own reader (nanover-server's
NanoverRecordingReader) and reads every message: each index entry's message is
unpacked, and iter_max() applies every frame (FrameData.unpack_from_dict, which
unpacks the packed arrays by upstream's key table) and every state change.

usage: nanover_read_check.py FILE...
Prints one line per file: `ok FILE MESSAGES` or `error FILE: WHY`; exits 1 if any failed.
"""

import sys

from nanover.recording.reading import NanoverRecordingReader


def check(path):
    with NanoverRecordingReader.from_path(path) as reader:
        n = 0
        for entry in reader:
            message = reader.get_message_from_entry(entry)
            if not isinstance(message, dict):
                raise ValueError(f"message {n} is not a map")
            if entry.metadata.get("timestamp") is None:
                raise ValueError(f"message {n} has no timestamp")
            n += 1
        events = sum(1 for _ in reader.iter_max())
        if events != n:
            raise ValueError(f"{n} messages but {events} playback events")
        return n


def main():
    failed = 0
    for path in sys.argv[1:]:
        try:
            print(f"ok {path} {check(path)}")
        except Exception as e:  # noqa: BLE001 - any failure of upstream's reader is the finding
            print(f"error {path}: {type(e).__name__}: {e}")
            failed = 1
    return failed


if __name__ == "__main__":
    sys.exit(main())
