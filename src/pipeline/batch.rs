//! `convert --each`: the inputs grouped into recordings (a `.traj` with its `.state` named
//! beside it is one), an output name for each in the output directory, and a pool of worker
//! threads that converts them in parallel, each job on its own.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::formats::{registry, Format};

/// The inputs as recordings, in the order given: an input and those of its companions
/// (`Format::companions`) that were also named are one recording.
pub fn recordings(inputs: &[PathBuf]) -> Vec<Vec<PathBuf>> {
    let mut taken = vec![false; inputs.len()];
    let mut groups = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        if taken[i] {
            continue;
        }
        taken[i] = true;
        let mut group = vec![input.clone()];
        if let Ok(format) = registry::detect(input) {
            for companion in format.companions(input) {
                if let Some(j) = inputs.iter().position(|p| *p == companion) {
                    if !taken[j] {
                        taken[j] = true;
                        group.push(inputs[j].clone());
                    }
                }
            }
        }
        groups.push(group);
    }
    groups
}

/// The name of a recording without its format's extension (`run.nanover.zip` → `run`,
/// `small.traj` → `small`, a replay directory → its name).
fn stem(input: &Path) -> String {
    let name = input
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "recording".into());
    let extensions: Vec<&str> = registry::detect(input)
        .map(|f| f.extensions().to_vec())
        .unwrap_or_default();
    extensions
        .iter()
        .filter_map(|e| name.strip_suffix(e))
        .filter(|s| !s.is_empty())
        .min_by_key(|s| s.len())
        .map(str::to_string)
        .unwrap_or_else(|| match name.rsplit_once('.') {
            Some((s, _)) if !s.is_empty() => s.to_string(),
            _ => name.clone(),
        })
}

/// One output per recording in `dir`, named after its first input with `format`'s
/// extension (a directory, with a trailing `/`, for a format that writes directories);
/// names two recordings would share get `-2`, `-3`.
pub fn output_names(dir: &Path, recordings: &[Vec<PathBuf>], format: &dyn Format) -> Vec<PathBuf> {
    let ext = format.extensions().first().copied().unwrap_or("");
    let mut used = HashSet::new();
    recordings
        .iter()
        .map(|inputs| {
            let base = inputs.first().map(|p| stem(p)).unwrap_or_default();
            let mut name = base.clone();
            let mut n = 2;
            while !used.insert(name.clone()) {
                name = format!("{base}-{n}");
                n += 1;
            }
            if format.writes_directories() {
                PathBuf::from(format!("{}/", dir.join(name).display()))
            } else {
                dir.join(format!("{name}{ext}"))
            }
        })
        .collect()
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

    #[test]
    fn a_traj_and_its_state_are_one_recording_and_names_stay_apart() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let traj = root.join("nanover-legacy/small.traj");
        let state = root.join("nanover-legacy/small.state");
        let zip = root.join("nanover-zip/small.nanover.zip");
        let inputs = vec![traj.clone(), zip.clone(), state.clone()];
        let groups = recordings(&inputs);
        assert_eq!(groups, vec![vec![traj, state], vec![zip]]);
        let parquet = registry::format_named("parquet").unwrap();
        let names = output_names(Path::new("out"), &groups, parquet);
        assert_eq!(
            names,
            [
                PathBuf::from("out/small.parquet"),
                PathBuf::from("out/small-2.parquet")
            ]
        );
    }

    #[test]
    fn every_job_runs_once_and_results_keep_their_order() {
        let out = run_parallel(50, 3, |i| i * 2);
        assert_eq!(out, (0..50).map(|i| i * 2).collect::<Vec<_>>());
        assert!(run_parallel(0, 4, |i| i).is_empty());
    }
}
