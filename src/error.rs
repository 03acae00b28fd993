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

impl Error {
    /// The same error, said of the file an `option` (`--catalog`) names: a read that fails
    /// names the option, so that it is not taken for one of the PATHs.
    #[must_use]
    pub fn of_option(self, option: &str) -> Self {
        match self {
            Error::Read { path, source } => Error::Usage(format!(
                "{option} `{}`: failed to read it: {source}",
                path.display()
            )),
            other => other,
        }
    }
}

/// Short for `Result<T, Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;
