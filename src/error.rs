//! Failures that stop a run (as opposed to [`crate::diagnostic::Diagnostic`]s, which are
//! findings about manifests).

use std::path::PathBuf;

/// Why kvrender could not go on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file or directory could not be read.
    #[error("failed to read `{}`", path.display())]
    Read {
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("failed to write `{}`", path.display())]
    Write {
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The output could not be written.
    #[error("failed to write output")]
    Output(#[source] std::io::Error),
    /// The command line or a configuration is unusable.
    #[error("{0}")]
    Usage(String),
}

/// Short for `Result<T, Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;
