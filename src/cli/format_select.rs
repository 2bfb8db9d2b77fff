//! Selectors a format defines for itself (XREC's `--type` and `--chapter`): given to the
//! format's own slice (`Slicer::open_slice`, `SliceRequest::selectors`), refused by formats
//! that have none.

/// Format-specific selectors, by name.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct FormatSelectArgs {
    /// XREC: keep only events whose type name matches this glob (repeatable; `*` crosses dots)
    #[arg(long = "type", value_name = "GLOB")]
    pub types: Vec<String>,
    /// XREC: only the events from the chapter marker NAME to the next chapter (or the end)
    #[arg(long, value_name = "NAME")]
    pub chapter: Option<String>,
}

impl FormatSelectArgs {
    /// (selector, value) pairs, as `SliceRequest::selectors` carries them.
    pub fn selectors(&self) -> Vec<(String, String)> {
        let mut s: Vec<(String, String)> = self
            .types
            .iter()
            .map(|t| ("type".to_string(), t.clone()))
            .collect();
        if let Some(c) = &self.chapter {
            s.push(("chapter".into(), c.clone()));
        }
        s
    }
}
