//! Where the fixtures are, and copies of them a test may change.

use std::path::{Path, PathBuf};

/// `fixtures/<rel>` in this checkout, for any format.
pub fn any_fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

/// `fixtures/nanover-legacy/<rel>`: the small pair most command tests run on.
pub fn fixture(rel: &str) -> PathBuf {
    any_fixture("nanover-legacy").join(rel)
}

/// The bytes of `fixtures/<rel>`.
pub fn any_fixture_bytes(rel: &str) -> Vec<u8> {
    let path = any_fixture(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The bytes of `fixtures/nanover-legacy/<rel>`.
pub fn fixture_bytes(rel: &str) -> Vec<u8> {
    any_fixture_bytes(&format!("nanover-legacy/{rel}"))
}

/// A path as a `&str` for an argument list.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Copies a file or a directory tree, writable whatever the fixture's permissions (a test
/// copies a fixture to damage it).
pub fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            copy_tree(&e.path(), &to.join(e.file_name()));
        }
    } else {
        std::fs::copy(from, to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
        let mut p = std::fs::metadata(to).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        p.set_readonly(false);
        std::fs::set_permissions(to, p).unwrap();
    }
}

/// Every file under `dir` (in its subdirectories too), relative to it, sorted.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// Names of every entry in `dir`, hidden ones included, sorted.
pub fn dir_entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A copy of `fixtures/icarec/a2.icarec` in `dir` as `cut.icarec`, its three 40-byte frames
/// followed by the first 10 bytes of a fourth: a recording whose last frame is partial.
pub fn icarec_with_partial_last_frame(dir: &Path) -> PathBuf {
    let src = any_fixture("icarec/a2.icarec");
    let rec = dir.join("cut.icarec");
    std::fs::create_dir(&rec).unwrap();
    for part in ["schema.json", "static_signals.bin", "metadata.json"] {
        std::fs::copy(src.join(part), rec.join(part)).unwrap();
    }
    let mut dynamic = std::fs::read(src.join("dynamic_signals.bin")).unwrap();
    assert_eq!(dynamic.len(), 120, "three frames of 40 bytes");
    dynamic.extend_from_within(..10);
    std::fs::write(rec.join("dynamic_signals.bin"), &dynamic).unwrap();
    rec
}

/// A lab's folder of mixed files at `dir/lab`, for the batch commands: four recordings (a
/// NanoVer pair, a crashed `.traj`, an `.icarec` directory, an XREC session) among three
/// files that are not recordings (a README, a PNG, a JSON file).
pub fn lab(dir: &Path) -> PathBuf {
    let lab = dir.join("lab");
    for sub in ["nanover", "icarus", "plots"] {
        std::fs::create_dir_all(lab.join(sub)).unwrap();
    }
    for (from, to) in [
        ("nanover-legacy/small.traj", "nanover/small.traj"),
        ("nanover-legacy/small.state", "nanover/small.state"),
        (
            "nanover-legacy/broken/trunc-payload.traj",
            "nanover/crashed.traj",
        ),
        ("xrec/session.xrec", "session.xrec"),
        ("icarec/a2.icarec", "icarus/a2.icarec"),
    ] {
        copy_tree(&any_fixture(from), &lab.join(to));
    }
    std::fs::write(lab.join("icarus/README.md"), b"# Runs of March\n").unwrap();
    std::fs::write(lab.join("plots/run.png"), b"\x89PNG\r\n\x1a\n").unwrap();
    std::fs::write(lab.join("capture.json"), b"{\"rig\": 2}\n").unwrap();
    lab
}
