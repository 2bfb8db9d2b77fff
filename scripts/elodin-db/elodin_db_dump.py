#!/usr/bin/env python3
"""Stdlib-only reader of Elodin DB directories, written from the spec in
docs/formats/elodin-db-bytes.md, used to check that spec against the fixtures and
against fixtures/elodin-db/elodin-0.18.0-read.json (what Elodin 0.18.0 serves).

usage: python3 elodin_db_dump.py DBDIR [--json OUT.json]   (dbcheck-shaped JSON)
       python3 elodin_db_dump.py --check-fixtures          (compare every fixture with the JSON)
Never writes into DBDIR; reads only committed bytes of each append log.
"""
import json, math, os, struct, sys

PRIMS = ["u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "bool", "f32", "f64"]
PFMT = {"u8": "B", "u16": "H", "u32": "I", "u64": "Q", "i8": "b", "i16": "h", "i32": "i",
        "i64": "q", "bool": "?", "f32": "f", "f64": "d"}
PSIZE = {k: struct.calcsize("<" + v) for k, v in PFMT.items()}


def fnv1a64(b):
    h = 0xcbf29ce484222325
    for c in b:
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def component_id(name):  # ComponentId::new: FNV-1a 64 of the UTF-8 name, top bit cleared
    return fnv1a64(name.encode()) & ~(1 << 63)


def msg_id(name):  # impeller2::types::msg_id: FNV-1a 32 xor-folded to 16 bits, LE bytes
    h = 0x811c9dc5
    for c in name.encode():
        h = ((h ^ c) * 0x01000193) & 0xFFFFFFFF
    v = (h >> 16) ^ (h & 0xFFFF)
    b = v.to_bytes(2, "little")
    if b[0] == 224:
        b = bytes([223, b[1]])
    return int.from_bytes(b, "little")  # directory name = u16::from_le_bytes(id)


class Cur:
    def __init__(self, b):
        self.b, self.i = b, 0

    def varint(self, maxbytes=10):
        n = sh = 0
        for _ in range(maxbytes):
            c = self.b[self.i]; self.i += 1
            n |= (c & 0x7F) << sh; sh += 7
            if not c & 0x80:
                return n
        raise ValueError("varint too long")

    def string(self):
        n = self.varint(5)
        s = self.b[self.i:self.i + n]
        if len(s) != n:
            raise ValueError("string past end")
        self.i += n
        return s.decode("utf-8")

    def map(self):
        return {self.string(): self.string() for _ in range(self.varint(5))}

    def duration(self):
        return self.varint(), self.varint(5)  # secs u64, nanos u32


def read_log_header(path, extra_fmt):
    """(committed_len, head_len, extra, file_size): 16-byte header + extra."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        h = f.read(16 + struct.calcsize("<" + extra_fmt) if extra_fmt else 16)
    committed, head = struct.unpack_from("<QQ", h)
    extra = struct.unpack_from("<" + extra_fmt, h, 16)[0] if extra_fmt else None
    return committed, head, extra, size


def read_committed(path, extra_fmt):
    hdr = 16 + (struct.calcsize("<" + extra_fmt) if extra_fmt else 0)
    committed, head, extra, size = read_log_header(path, extra_fmt)
    if committed < hdr or committed > size:
        raise ValueError(f"{path}: committed_len {committed} outside [{hdr}, {size}]")
    with open(path, "rb") as f:
        f.seek(hdr)
        body = f.read(committed - hdr)
    return extra, body


def schema(b):
    c = Cur(b)
    ty = c.varint(5)
    shape = [c.varint() for _ in range(c.varint())]
    return PRIMS[ty], shape


def comp_metadata(b, legacy=False):
    c = Cur(b)
    cid = c.varint()
    name = c.string()
    md = c.map()
    out = {"component_id": cid, "name": name, "metadata": md}
    if legacy:
        out["asset"] = bool(c.b[c.i]); c.i += 1
    out["trailing"] = len(b) - c.i
    return out


def db_state(b):
    c = Cur(b)
    rec = c.b[0]; c.i = 1
    step = c.duration()
    rest = len(b) - c.i
    try:
        m = c.map()
        if c.i == len(b):
            return {"layout": "0.15+", "recording": bool(rec), "default_stream_time_step": step, "metadata": m}
    except Exception:
        pass
    c = Cur(b); c.i = 1
    s1 = c.duration(); s2 = c.duration()
    return {"layout": "0.12-0.14", "recording": bool(rec), "time_step": s1,
            "default_stream_time_step": s2, "trailing": len(b) - c.i}


def values(body, ty, shape, n):
    k = 1
    for d in shape:
        k *= d
    fmt = "<" + PFMT[ty] * k
    es = PSIZE[ty] * k
    out = []
    for r in range(n):
        v = list(struct.unpack_from(fmt, body, r * es))
        out.append(nest(v, shape))
    return out


def nest(v, shape):
    if not shape:
        return v[0]
    if len(shape) == 1:
        return v
    step = len(v) // shape[0]
    return [nest(v[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def plain(x):
    if isinstance(x, list):
        return [plain(y) for y in x]
    if isinstance(x, float) and not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def read_series(d, ty, shape):
    start, ib = read_committed(os.path.join(d, "index"), "q")
    esize, db = read_committed(os.path.join(d, "data"), "Q")
    k = 1
    for s in shape:
        k *= s
    if esize != PSIZE[ty] * k:
        raise ValueError(f"{d}: data header element size {esize} != schema {PSIZE[ty] * k}")
    n_idx, n_dat = len(ib) // 8, len(db) // esize if esize else 0
    n = min(n_idx, n_dat)
    ts = list(struct.unpack_from(f"<{n}q", ib))
    if any(b < a for a, b in zip(ts, ts[1:])):
        raise ValueError(f"{d}: non-monotonic index")
    return {"start_timestamp_extra": start, "index_rows": n_idx, "data_rows": n_dat,
            "rows": n, "timestamps": ts, "values": values(db, ty, shape, n)}


def read_msgs(db):
    out = {}
    m = os.path.join(db, "msgs")
    if not os.path.isdir(m):
        return out
    for e in sorted(os.listdir(m)):
        p = os.path.join(m, e)
        mb = open(os.path.join(p, "metadata"), "rb").read()
        c = Cur(mb)
        name = c.string()
        _, tb = read_committed(os.path.join(p, "timestamps"), "")
        _, ob = read_committed(os.path.join(p, "offsets"), "")
        _, lb = read_committed(os.path.join(p, "data_log"), "")
        n = min(len(tb) // 8, len(ob) // 16)
        ts = list(struct.unpack_from(f"<{n}q", tb))
        pl = []
        for i in range(n):
            ln = struct.unpack_from("<I", ob, i * 16)[0]
            if ln <= 12:
                pl.append(ob[i * 16 + 4:i * 16 + 4 + ln])
            else:
                prefix, _idx, off = struct.unpack_from("<4sII", ob, i * 16 + 4)
                payload = lb[off:off + ln]
                assert payload[:4] == prefix, "prefix mismatch"
                pl.append(payload)
        ent = {"dir": e, "count": n, "timestamps": ts, "id_matches_name": msg_id(name) == int(e),
               "metadata_hex": mb.hex()}
        try:
            ent["payloads"] = [x.decode() for x in pl]
        except UnicodeDecodeError:
            ent["payloads_hex"] = [x.hex() for x in pl]
        out[name] = ent
    return out


def read_db(db):
    st = db_state(open(os.path.join(db, "db_state"), "rb").read())
    res = {"db_state": st, "components": {}, "metadata_only": {}, "problems": []}
    legacy = st["layout"] != "0.15+"
    for e in sorted(os.listdir(db)):
        d = os.path.join(db, e)
        if not os.path.isdir(d) or not e.isdigit():
            continue
        md = comp_metadata(open(os.path.join(d, "metadata"), "rb").read(), legacy) \
            if os.path.exists(os.path.join(d, "metadata")) else None
        if md and md["component_id"] != int(e):
            res["problems"].append(f"{e}: metadata id {md['component_id']}")
        if md and component_id(md["name"]) != int(e) and not legacy:
            res["problems"].append(f"{e}: hash({md['name']!r}) = {component_id(md['name'])}")
        if not os.path.exists(os.path.join(d, "schema")):
            res["metadata_only"][md["name"] if md else e] = md["metadata"] if md else {}
            continue
        ty, shape = schema(open(os.path.join(d, "schema"), "rb").read())
        name = md["name"] if md else e
        ent = {"prim_type": ty, "shape": shape,
               "element_names": [x for x in md["metadata"].get("element_names", "").split(",") if x] if md else [],
               "metadata": md["metadata"] if md else {}, "dir": e}
        if legacy:
            ent["entities"] = {}
            for sub in sorted(os.listdir(d)):
                if sub.isdigit():
                    ent["entities"][sub] = read_series(os.path.join(d, sub), ty, shape)
        else:
            ent.update(read_series(d, ty, shape))
        res["components"][name] = ent
    res["msgs"] = read_msgs(db)
    return res


def check_fixtures():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "fixtures", "elodin-db")
    ref = json.load(open(os.path.join(root, "elodin-0.18.0-read.json")))["fixtures"]
    bad = 0
    for fx, exp in ref.items():
        got = read_db(os.path.join(root, fx))
        if "components" not in exp:
            print(f"{fx}: Elodin refuses ({exp}); we read layout {got['db_state']['layout']}, "
                  f"{len(got['components'])} component dirs with schema")
            continue
        errs = list(got["problems"])
        if sorted(got["metadata_only"]) != sorted(exp["metadata_only"]):
            errs.append(f"metadata_only {sorted(got['metadata_only'])} != {exp['metadata_only']}")
        if set(got["components"]) != set(exp["components"]):
            errs.append(f"component set differs: {set(got['components']) ^ set(exp['components'])}")
        for name, e in exp["components"].items():
            g = got["components"].get(name)
            if not g:
                continue
            for k in ("prim_type", "shape", "element_names", "metadata", "rows"):
                if g[k] != e[k]:
                    errs.append(f"{name}.{k}: {g[k]} != {e[k]}")
            if g["rows"]:
                chk = [("first_us", g["timestamps"][0]), ("last_us", g["timestamps"][-1]),
                       ("first", plain(g["values"][0])), ("last", plain(g["values"][-1]))]
                for k, v in chk:
                    if k in e and v != e[k]:
                        errs.append(f"{name}.{k}: {v} != {e[k]}")
        for name, e in exp.get("msgs", {}).items():
            g = got["msgs"].get(name)
            if not g:
                errs.append(f"msg log {name} missing"); continue
            for k in ("count", "timestamps", "payloads", "dir"):
                if k in e and g.get(k) != e[k]:
                    errs.append(f"msg {name}.{k}: {g.get(k)} != {e[k]}")
            if not g["id_matches_name"]:
                errs.append(f"msg {name}: dir {g['dir']} != msg_id(name) {msg_id(name)}")
        earliest = got["db_state"].get("metadata", {}).get("time.start_timestamp")
        print(f"{fx}: {'OK' if not errs else 'MISMATCH'} components={len(got['components'])} "
              f"rows={sum(c['rows'] for c in got['components'].values())} (json {exp['rows']}) "
              f"db_state.time.start_timestamp={earliest} json.earliest={exp.get('earliest_timestamp')}")
        for x in errs[:20]:
            print("   ", x)
        bad += bool(errs)
    return bad


if __name__ == "__main__":
    if sys.argv[1:] == ["--check-fixtures"]:
        sys.exit(1 if check_fixtures() else 0)
    r = read_db(sys.argv[1])
    if "--json" in sys.argv:
        json.dump(plain_tree := json.loads(json.dumps(r, default=str)), open(sys.argv[sys.argv.index("--json") + 1], "w"))
    for n, c in r["components"].items():
        print(n, c["prim_type"], c["shape"], c.get("rows"), c.get("index_rows"), c.get("data_rows"),
              c.get("start_timestamp_extra"))
    print(json.dumps(r["db_state"], default=str)[:300])
