//! Batches (`validate`, `inspect`, `convert --each`): the arguments as the recordings they
//! name — files as named, directories walked, globs expanded — with what was found that is
//! not a recording; the files grouped into recordings (a `.traj` with its `.state` beside it
//! is one); an output name for each in an output directory; and a pool of worker threads
//! that converts them in parallel, each job on its own.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use globset::{GlobBuilder, GlobMatcher};

use crate::formats::{registry, Format};

/// A file (or a directory that is a recording) to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub path: PathBuf,
    /// Where it was found, relative to the argument that named it: its own name for a path
    /// named, `sub/run.h5` for `data/sub/run.h5` found walking `data` or matching
    /// `data/**/*.h5`. `convert --each` mirrors it under the output directory.
    pub relative: PathBuf,
}

/// A file found in a directory or by a glob that is not a recording simrec reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub path: PathBuf,
    pub reason: String,
}

/// What a batch's arguments name.
#[derive(Debug, Default)]
pub struct Batch {
    /// In the order of the arguments, each directory's entries in name order.
    pub files: Vec<Found>,
    pub skipped: Vec<Skipped>,
    /// Whether an argument was a directory walked or a glob expanded.
    pub expanded: bool,
}

/// One recording of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recording {
    /// Indices into [`Batch::files`], the one the recording is named by first.
    pub members: Vec<usize>,
    /// The members' paths, in the same order.
    pub inputs: Vec<PathBuf>,
    /// The naming member's [`Found::relative`].
    pub relative: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    #[error("`{pattern}` is not a valid glob: {why}")]
    Glob { pattern: String, why: String },
    #[error("no file matches `{0}`")]
    NoMatch(String),
    #[error(
        "{} and {} would both be written to {}: name them in separate runs, or walk a \
         directory that holds both (its subdirectories are kept under the output directory)",
        .first.display(), .second.display(), .output.display()
    )]
    SameOutput {
        first: PathBuf,
        second: PathBuf,
        output: PathBuf,
    },
}

/// How a batch is gathered.
#[derive(Debug, Default, Clone, Copy)]
pub struct Gather<'a> {
    /// Files found that are not recordings are read anyway (and fail as a file named would),
    /// not skipped.
    pub strict: bool,
    /// A directory not to walk into (`convert --each`'s output directory).
    pub exclude: Option<&'a Path>,
}

/// The recordings `args` name: a file as named (whatever it holds; `-` is standard input),
/// a directory that is a recording (an `.icarec` directory, an Elodin replay) as one, any
/// other directory walked (recursively, in name order; one in which no recording is found
/// is read as named, and fails as a file that is not a recording does), and a glob (an argument that names
/// no file and holds `*`, `?`, `[` or `{`; `*` stays within a directory name, `**` crosses
/// directories) expanded the same way. A file found by walking or a glob is a recording
/// when a format simrec reads claims it by its bytes or its name; anything else is skipped.
/// Names starting with `.` are not walked into or matched, nor are symbolic links to
/// directories.
pub fn gather(args: &[PathBuf], how: Gather) -> Result<Batch, BatchError> {
    let mut gathering = Gathering {
        how,
        exclude: how.exclude.and_then(|p| p.canonicalize().ok()),
        batch: Batch::default(),
    };
    for arg in args {
        gathering.argument(arg)?;
    }
    Ok(gathering.batch)
}

struct Gathering<'a> {
    how: Gather<'a>,
    exclude: Option<PathBuf>,
    batch: Batch,
}

/// Why `path` is not a recording simrec reads, or `None` when it is one.
fn not_a_recording(path: &Path) -> Option<String> {
    match registry::detect(path) {
        Ok(format) if format.reads() => None,
        Ok(format) => Some(format!(
            "a {} file, which simrec writes but does not read",
            format.name()
        )),
        Err(_) => Some("not a recording simrec reads".into()),
    }
}

/// The name of a path named as an argument (of the directory it means, for `.`).
fn name_of(arg: &Path) -> PathBuf {
    arg.file_name()
        .map(PathBuf::from)
        .or_else(|| arg.canonicalize().ok()?.file_name().map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("recording"))
}

/// Whether an argument is a glob to expand rather than a path.
fn is_glob(arg: &Path) -> bool {
    arg.to_str()
        .is_some_and(|s| s.contains(['*', '?', '[', '{']))
        && !arg.exists()
}

/// The names in `dir`, sorted, hidden ones left out.
fn listing(dir: &Path) -> std::io::Result<Vec<OsString>> {
    let listed = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut names: Vec<OsString> = fs::read_dir(listed)?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<Result<_, _>>()?;
    names.retain(|n| !n.to_string_lossy().starts_with('.'));
    names.sort();
    Ok(names)
}

/// Whether `path` is a directory reached without a symbolic link, to walk into.
fn is_real_dir(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

impl Gathering<'_> {
    fn argument(&mut self, arg: &Path) -> Result<(), BatchError> {
        if arg.as_os_str() == "-" {
            self.read(arg.to_path_buf(), PathBuf::from("stdin"));
        } else if arg.is_dir() && not_a_recording(arg).is_some() {
            self.batch.expanded = true;
            let (files, skipped) = (self.batch.files.len(), self.batch.skipped.len());
            self.walk(arg, Path::new(""));
            if self.batch.files.len() == files {
                // Nothing in it is a recording (a replay whose metadata.json is gone): read
                // as named, it fails as a file that is not a recording does.
                self.batch.skipped.truncate(skipped);
                self.read(arg.to_path_buf(), name_of(arg));
            }
        } else if is_glob(arg) {
            self.batch.expanded = true;
            self.glob(arg)?;
        } else {
            self.read(arg.to_path_buf(), name_of(arg));
        }
        Ok(())
    }

    fn read(&mut self, path: PathBuf, relative: PathBuf) {
        self.batch.files.push(Found { path, relative });
    }

    /// A file (or recording directory) found by walking or a glob.
    fn found(&mut self, path: PathBuf, relative: PathBuf) {
        match not_a_recording(&path) {
            Some(reason) if !self.how.strict => self.batch.skipped.push(Skipped { path, reason }),
            _ => self.read(path, relative),
        }
    }

    fn excluded(&self, path: &Path) -> bool {
        self.exclude
            .as_ref()
            .is_some_and(|e| path.canonicalize().is_ok_and(|p| p == *e))
    }

    /// Every recording under `dir`; `relative` is where `dir` is in the batch.
    fn walk(&mut self, dir: &Path, relative: &Path) {
        let Ok(names) = listing(dir) else {
            // Read as named, so that the run says why it cannot be.
            self.read(dir.to_path_buf(), relative.to_path_buf());
            return;
        };
        for name in names {
            let (path, rel) = (dir.join(&name), relative.join(&name));
            if self.excluded(&path) {
                continue;
            }
            if is_real_dir(&path) && not_a_recording(&path).is_some() {
                self.walk(&path, &rel);
            } else if path.is_dir() && !is_real_dir(&path) {
                self.batch.skipped.push(Skipped {
                    path,
                    reason: "a symbolic link to a directory (not followed)".into(),
                });
            } else {
                self.found(path, rel);
            }
        }
    }

    fn glob(&mut self, arg: &Path) -> Result<(), BatchError> {
        let pattern = arg.to_string_lossy().into_owned();
        let matcher = GlobBuilder::new(&pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| BatchError::Glob {
                pattern: pattern.clone(),
                why: e.kind().to_string(),
            })?
            .compile_matcher();
        // Walked from the components before the first with a wildcard, only as deep as the
        // pattern reaches.
        let mut base = PathBuf::new();
        let mut rest = 0usize;
        for c in arg.components() {
            if rest > 0
                || c.as_os_str()
                    .to_string_lossy()
                    .contains(['*', '?', '[', '{'])
            {
                rest += 1;
            } else {
                base.push(c);
            }
        }
        let depth = if pattern.contains("**") {
            usize::MAX
        } else {
            rest
        };
        let before = self.batch.files.len() + self.batch.skipped.len();
        self.glob_under(&base, &base, &matcher, depth);
        if self.batch.files.len() + self.batch.skipped.len() == before {
            return Err(BatchError::NoMatch(pattern));
        }
        Ok(())
    }

    fn glob_under(&mut self, base: &Path, dir: &Path, matcher: &GlobMatcher, depth: usize) {
        let Ok(names) = listing(dir) else { return };
        for name in names {
            let path = dir.join(&name);
            if self.excluded(&path) {
                continue;
            }
            let relative = path.strip_prefix(base).unwrap_or(&path).to_path_buf();
            let walkable = is_real_dir(&path) && not_a_recording(&path).is_some();
            if matcher.is_match(&path) {
                if walkable {
                    self.walk(&path, &relative);
                } else {
                    self.found(path, relative);
                }
            } else if walkable && depth > 1 {
                self.glob_under(base, &path, matcher, depth - 1);
            }
        }
    }
}

impl Batch {
    /// The paths of [`Batch::files`].
    pub fn paths(&self) -> Vec<PathBuf> {
        self.files.iter().map(|f| f.path.clone()).collect()
    }

    /// The files as recordings, in the order of their first file: a file and those of its
    /// companions (`MultiFile::companions`) that are also in the batch are one, named by the
    /// one with its format's first extension (a NanoVer pair by its `.traj`).
    pub fn recordings(&self) -> Vec<Recording> {
        let files = &self.files;
        let mut taken = vec![false; files.len()];
        let mut recordings = Vec::new();
        for i in 0..files.len() {
            if taken[i] {
                continue;
            }
            taken[i] = true;
            let mut members = vec![i];
            if let Ok(format) = registry::detect(&files[i].path) {
                for companion in format.companions(&files[i].path) {
                    let j = (0..files.len()).find(|&j| !taken[j] && files[j].path == companion);
                    if let Some(j) = j {
                        taken[j] = true;
                        members.push(j);
                    }
                }
                if let Some(k) = members
                    .iter()
                    .position(|&m| named_by_first_extension(format, &files[m].path))
                {
                    members[..=k].rotate_right(1);
                }
            }
            recordings.push(Recording {
                inputs: members.iter().map(|&m| files[m].path.clone()).collect(),
                relative: files[members[0]].relative.clone(),
                members,
            });
        }
        recordings
    }
}

fn named_by_first_extension(format: &dyn Format, path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy());
    match (name, format.extensions().first()) {
        (Some(name), Some(ext)) => name.ends_with(ext),
        _ => false,
    }
}

/// A name for an output: `name` with control characters as `_`, never empty, `.` or `..`.
fn safe_name(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| if c.is_control() { '_' } else { c })
        .collect();
    if clean.is_empty() || clean == "." || clean == ".." {
        "recording".into()
    } else {
        clean
    }
}

/// The stable name of the recording `inputs` make (what `convert --each` names its output
/// after): the file name, with its extensions, of the input its format is named by (a
/// NanoVer pair by its `.traj`), else of the first input.
pub fn recording_name(inputs: &[PathBuf]) -> String {
    let named = |p: &&PathBuf| registry::detect(p).is_ok_and(|f| named_by_first_extension(f, p));
    let by = match inputs {
        [one] => Some(one),
        _ => inputs.iter().find(named).or(inputs.first()),
    };
    let name = by.map(|p| name_of(p)).unwrap_or_default();
    safe_name(&name.to_string_lossy())
}

/// The output of each recording in `dir`: its file name with all its extensions and then
/// `format`'s (`rocket.h5` → `rocket.h5.jsonl`, `run.traj` with `run.state` →
/// `run.traj.jsonl`; a directory, with a trailing `/`, for a format that writes directories),
/// under the subdirectories it was found in. For a collection (the lake), the entry that
/// says the recording is in it, under its name alone ([`crate::formats::Collection`]).
/// Never outside `dir`; two recordings that would share an output are an error naming both.
pub fn output_names(
    dir: &Path,
    recordings: &[Recording],
    format: &dyn Format,
) -> Result<Vec<PathBuf>, BatchError> {
    let ext = format.extensions().first().copied().unwrap_or("");
    let mut taken: HashMap<PathBuf, usize> = HashMap::new();
    let mut outputs = Vec::with_capacity(recordings.len());
    for (i, recording) in recordings.iter().enumerate() {
        let names: Vec<String> = recording
            .relative
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(safe_name(&n.to_string_lossy())),
                _ => None,
            })
            .collect();
        let (last, parents) = names
            .split_last()
            .map(|(l, p)| (l.clone(), p.to_vec()))
            .unwrap_or_else(|| ("recording".into(), Vec::new()));
        let mut output = dir.to_path_buf();
        match format.collection() {
            // One directory for every recording: each is filed under its own name, so
            // recordings of one name in different subdirectories clash below.
            Some(collection) => output = collection.entry(dir, &last),
            None => {
                output.extend(parents);
                output.push(format!("{last}{ext}"));
            }
        }
        if let Some(&first) = taken.get(&output) {
            return Err(BatchError::SameOutput {
                first: recordings[first].inputs[0].clone(),
                second: recording.inputs[0].clone(),
                output,
            });
        }
        taken.insert(output.clone(), i);
        if registry::default_for_directories(format) {
            output = PathBuf::from(format!("{}/", output.display()));
        }
        outputs.push(output);
    }
    Ok(outputs)
}

/// Runs `job(i)` for every `i` in `0..n` on `jobs` threads (at least one), and returns the
/// results in order. A job that fails does not stop the others.
pub fn run_parallel<T: Send>(n: usize, jobs: usize, job: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, n.max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let result = job(i);
                if let Ok(mut r) = results.lock() {
                    r[i] = Some(result);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixtures() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
    }

    fn names(batch: &Batch) -> Vec<String> {
        batch
            .files
            .iter()
            .map(|f| f.relative.display().to_string())
            .collect()
    }

    #[test]
    fn a_traj_and_its_state_are_one_recording_named_by_the_traj() {
        let root = fixtures();
        let traj = root.join("nanover-legacy/small.traj");
        let state = root.join("nanover-legacy/small.state");
        let zip = root.join("nanover-zip/small.nanover.zip");
        let args = vec![state.clone(), zip.clone(), traj.clone()];
        let batch = gather(&args, Gather::default()).unwrap();
        assert!(!batch.expanded);
        let recordings = batch.recordings();
        let inputs: Vec<_> = recordings.iter().map(|r| r.inputs.clone()).collect();
        assert_eq!(inputs, vec![vec![traj, state], vec![zip]]);
        let parquet = registry::format_named("parquet").unwrap();
        let outputs = output_names(Path::new("out"), &recordings, parquet).unwrap();
        assert_eq!(
            outputs,
            [
                PathBuf::from("out/small.traj.parquet"),
                PathBuf::from("out/small.nanover.zip.parquet")
            ]
        );
    }

    #[test]
    fn directories_are_walked_and_globs_expanded_to_recordings_and_the_rest_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let root = fixtures();
        let data = dir.path().join("data");
        fs::create_dir_all(data.join("b/run.icarec")).unwrap();
        fs::create_dir_all(data.join(".git")).unwrap();
        for member in ["schema.json", "dynamic_signals.bin"] {
            fs::copy(
                root.join("icarec/a2.icarec").join(member),
                data.join("b/run.icarec").join(member),
            )
            .unwrap();
        }
        fs::copy(root.join("xrec/session.xrec"), data.join("a.xrec")).unwrap();
        fs::copy(root.join("xrec/session.xrec"), data.join("b/a.xrec")).unwrap();
        fs::write(data.join("README.md"), b"# runs").unwrap();
        fs::write(data.join(".git/HEAD"), b"ref").unwrap();
        fs::write(data.join("b/plot.png"), b"\x89PNG").unwrap();
        let batch = gather(std::slice::from_ref(&data), Gather::default()).unwrap();
        assert!(batch.expanded);
        assert_eq!(names(&batch), ["a.xrec", "b/a.xrec", "b/run.icarec"]);
        let skipped: Vec<_> = batch.skipped.iter().map(|s| s.path.clone()).collect();
        assert_eq!(skipped, [data.join("README.md"), data.join("b/plot.png")]);
        // --strict reads them too.
        let strict = Gather {
            strict: true,
            ..Gather::default()
        };
        assert_eq!(
            gather(std::slice::from_ref(&data), strict)
                .unwrap()
                .files
                .len(),
            5
        );
        // The output directory is not walked.
        let out = data.join("b");
        let without = Gather {
            exclude: Some(&out),
            ..Gather::default()
        };
        assert_eq!(
            names(&gather(std::slice::from_ref(&data), without).unwrap()),
            ["a.xrec"]
        );
        // A directory with no recording in it is read as named (and fails when read).
        let notes = dir.path().join("notes");
        fs::create_dir(&notes).unwrap();
        fs::write(notes.join("todo.txt"), b"x").unwrap();
        let batch = gather(std::slice::from_ref(&notes), Gather::default()).unwrap();
        assert_eq!(batch.paths(), [notes]);
        assert!(batch.skipped.is_empty());

        // Globs: `*` within a name, `**` across directories, relative to where they start.
        let glob = |p: &str| gather(&[data.join(p)], Gather::default()).map(|b| names(&b));
        assert_eq!(glob("*.xrec").unwrap(), ["a.xrec"]);
        assert_eq!(glob("**/*.xrec").unwrap(), ["a.xrec", "b/a.xrec"]);
        assert_eq!(glob("*/*.icarec").unwrap(), ["b/run.icarec"]);
        assert!(matches!(glob("*.h5"), Err(BatchError::NoMatch(_))));
        assert!(matches!(glob("[.xrec"), Err(BatchError::Glob { .. })));

        // Same names in two directories: kept apart by their subdirectories.
        let recordings = gather(std::slice::from_ref(&data), Gather::default())
            .unwrap()
            .recordings();
        let jsonl = registry::format_named("jsonl").unwrap();
        let outputs = output_names(Path::new("out"), &recordings, jsonl).unwrap();
        assert_eq!(
            outputs,
            [
                PathBuf::from("out/a.xrec.jsonl"),
                PathBuf::from("out/b/a.xrec.jsonl"),
                PathBuf::from("out/b/run.icarec.jsonl"),
            ]
        );
        // Named as files, they would meet: refused, naming both.
        let args = [data.join("a.xrec"), data.join("b/a.xrec")];
        let recordings = gather(&args, Gather::default()).unwrap().recordings();
        let clash = output_names(Path::new("out"), &recordings, jsonl).unwrap_err();
        assert!(matches!(clash, BatchError::SameOutput { .. }), "{clash}");
    }

    #[test]
    fn output_names_stay_inside_the_output_directory() {
        let xrec = registry::format_named("xrec").unwrap();
        let elodin = registry::format_named("elodin").unwrap();
        let recording = |name: &str| Recording {
            members: vec![0],
            inputs: vec![PathBuf::from(name)],
            relative: PathBuf::from(name),
        };
        let hostile = ["..xrec", "...xrec", "a\nb.xrec", "..", "."].map(recording);
        assert_eq!(
            output_names(Path::new("OUT"), &hostile[..3], xrec).unwrap(),
            ["OUT/..xrec.xrec", "OUT/...xrec.xrec", "OUT/a_b.xrec.xrec"].map(PathBuf::from)
        );
        assert_eq!(
            output_names(Path::new("OUT"), &hostile[..2], elodin).unwrap(),
            ["OUT/..xrec/", "OUT/...xrec/"].map(PathBuf::from)
        );
        assert_eq!(
            output_names(Path::new("OUT"), &hostile[3..4], xrec).unwrap(),
            [PathBuf::from("OUT/recording.xrec")]
        );
    }

    #[test]
    fn every_job_runs_once_and_results_keep_their_order() {
        let out = run_parallel(50, 3, |i| i * 2);
        assert_eq!(out, (0..50).map(|i| i * 2).collect::<Vec<_>>());
        assert!(run_parallel(0, 4, |i| i).is_empty());
    }
}
