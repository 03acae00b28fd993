//! Command-line arguments (clap derive types). No logic here.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Render KubeVirt instancetype catalogs and expand VirtualMachines offline, as KubeVirt would.
#[derive(Debug, Parser)]
#[command(
    name = "kvrender",
    version,
    about,
    long_about = None,
    after_help = "With no arguments and a ResourceList piped on stdin, kvrender runs as a KRM \
                  function (`kvrender fn`): that is how kpt and kustomize start exec functions."
)]
pub struct Cli {
    /// Worker threads, 1 to 256 (default: one per core). Output is the same for any count.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Expand every VirtualMachine found in PATH, as KubeVirt's `expand-spec` would.
    Expand(ExpandArgs),
    /// Render catalogs, expand VirtualMachines and pass other objects through: the main job.
    Build(BuildArgs),
    /// Check instancetypes, preferences, VirtualMachines, VMIs, presets, VirtualMachinePools and
    /// VirtualMachineInstanceReplicaSets as KubeVirt's admission would.
    Validate(ValidateArgs),
    /// Print the VirtualMachineInstance each VirtualMachine (or VirtualMachinePool, or
    /// VirtualMachineInstanceReplicaSet) will produce.
    Vmi(VmiArgs),
    /// Show what the cluster will add to each VirtualMachine, as a unified diff.
    Diff(DiffArgs),
    /// Run as a KRM function: a ResourceList on stdin, a ResourceList on stdout (with CONFIG, a
    /// kustomize exec plugin: a YAML stream in and out).
    Fn(FnArgs),
    /// Migrate legacy objects to their replacements.
    #[command(subcommand)]
    Migrate(MigrateCommand),
    /// Print a shell completion script (`source <(kvrender completion bash)`).
    Completion(CompletionArgs),
}

/// `kvrender completion`.
#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// The shell the script is for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Where instancetypes and preferences come from, and the cluster profile. Shown under a
/// heading of their own, after each command's own options, so that they read the same in every
/// command's help.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Inputs, references and cluster")]
pub struct ResolveArgs {
    /// Extra files or directories whose objects are used to resolve references, but not
    /// printed: instancetypes and preferences (and catalog families), the DataSources,
    /// DataVolumes and PVCs `inferFromVolume` reads, and the VirtualMachineInstancePresets that
    /// select VMIs (often only in the cluster).
    #[arg(long = "catalog", value_name = "PATH")]
    pub catalogs: Vec<PathBuf>,
    /// Do not use the embedded common catalog: only the given inputs exist, and catalog
    /// documents cannot borrow its parts.
    #[arg(long)]
    pub no_default_catalog: bool,
    /// A `KubeVirt` custom resource (or its `spec.configuration`) whose configuration sets the
    /// cluster defaults, or `-` for stdin (`kubectl get kubevirt -A -o yaml |`). Default:
    /// KubeVirt's defaults on amd64.
    #[arg(long, value_name = "FILE")]
    pub cluster_config: Option<PathBuf>,
    /// Leave out the files and folders a glob matches, in PATH and `--catalog` (repeatable): a
    /// name at any depth (`mkdocs.yml`, `*.json`, `ansible`), or with a `/` a path as shown in
    /// findings or from the directory walked (`docs/*.yaml`, `clusters/**/flux-system`); a
    /// trailing `/` matches folders only.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// The directory kustomize built, when the input is its output (`kubectl kustomize DIR |
    /// kvrender validate --built-from DIR -`): findings about objects that carry kustomize's
    /// origin annotation (`buildMetadata: [originAnnotations]`) point at the files and lines
    /// they came from.
    #[arg(long, value_name = "DIR")]
    pub built_from: Option<PathBuf>,
}

impl ResolveArgs {
    /// The compiled `--exclude` patterns.
    pub fn exclude(&self) -> crate::error::Result<crate::load::Exclude> {
        crate::load::Exclude::new(&self.exclude)
    }

    /// `--built-from`, which must be a directory: a mistyped one would leave every finding in
    /// the stream without a word.
    pub fn built_from(&self) -> crate::error::Result<Option<&std::path::Path>> {
        match &self.built_from {
            Some(dir) if !dir.is_dir() => Err(crate::error::Error::Usage(format!(
                "--built-from {}: not a directory (give the directory kustomize built)",
                dir.display()
            ))),
            dir => Ok(dir.as_deref()),
        }
    }
}

/// `kvrender expand`.
#[derive(Debug, Args)]
pub struct ExpandArgs {
    /// Files or directories (walked for *.yaml, *.yml, *.json), or `-` for stdin.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// Resolution and cluster profile.
    #[command(flatten)]
    pub resolve: ResolveArgs,
}

/// `kvrender build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Files or directories, or `-` for stdin. Default: the current directory.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Write one file per object under DIR instead of printing a stream.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// With `-o`, write the release bundles (all-in-one, per kind, CHECKSUMS.sha256) instead.
    #[arg(long, requires = "output")]
    pub bundles: bool,
    /// With `-o`, delete the files an earlier `build -o` wrote in DIR that this run does not
    /// write (objects since removed from the inputs). No other file of DIR is touched.
    #[arg(long, requires = "output")]
    pub prune: bool,
    /// With `-o`, write nothing: list the files of DIR that a run would create or change (and,
    /// with `--prune`, delete), and exit 1 when there is one. For CI over committed output.
    #[arg(long, requires = "output")]
    pub check: bool,
    /// Stamp this version label value on every rendered object.
    #[arg(long, value_name = "VERSION", value_parser = label_value)]
    pub version_label: Option<String>,
    /// The label key used by `--version-label`.
    #[arg(
        long,
        value_name = "KEY",
        requires = "version_label",
        default_value = "instancetype.kubevirt.io/common-instancetypes-version",
        value_parser = label_key
    )]
    pub version_label_key: String,
    /// Treat every warning as an error: a misspelt field in a template, a deprecated CPU
    /// topology, ... then stop the build, and nothing is printed or written.
    #[arg(long)]
    pub strict: bool,
    /// Print only the catalog: the rendered objects and the instancetypes and preferences in PATH
    /// (no VMs, no other objects).
    #[arg(long)]
    pub catalog_only: bool,
    /// Resolution and cluster profile.
    #[command(flatten)]
    pub resolve: ResolveArgs,
}

/// Output formats for findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    /// `file:line[:col]: severity[CODE] Kind/ns/name: field: message`, then a summary (a
    /// column only for YAML syntax errors).
    #[default]
    Human,
    /// `{"findings": [...]}`.
    Json,
    /// GitHub Actions workflow commands.
    Github,
    /// SARIF 2.1.0.
    Sarif,
    /// A GitLab Code Quality report (JSON), for `artifacts:reports:codequality`.
    Gitlab,
}

/// `kvrender validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Files or directories, or `-` for stdin. Default: the current directory.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Treat every warning as an error.
    #[arg(long)]
    pub strict: bool,
    /// Resolution and cluster profile.
    #[command(flatten)]
    pub resolve: ResolveArgs,
}

/// How far `vmi` goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Stage {
    /// Stop after VirtualMachineInstancePresets, before the VMI webhook's defaults.
    Presets,
    /// The whole VMI as the cluster creates it.
    #[default]
    Full,
}

/// `kvrender vmi` (and, with [`DiffArgs`], `kvrender diff`).
#[derive(Debug, Args)]
pub struct VmiArgs {
    /// Files or directories, or `-` for stdin.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// How far to go.
    #[arg(long, value_enum, default_value_t = Stage::Full)]
    pub stage: Stage,
    /// Resolution and cluster profile.
    #[command(flatten)]
    pub resolve: ResolveArgs,
}

/// `kvrender diff`: what `vmi` builds, and the colour of the diff.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Colour: auto (on a terminal), always or never.
    #[arg(long, default_value = "auto", value_parser = ["auto", "always", "never"])]
    pub color: String,
    /// What `vmi` takes.
    #[command(flatten)]
    pub vmi: VmiArgs,
}

/// `kvrender fn`.
#[derive(Debug, Args)]
pub struct FnArgs {
    /// A function config file, as kustomize's legacy exec plugins pass it: stdin and stdout
    /// are then a plain YAML stream of objects, not a ResourceList. Default: the
    /// ResourceList's `functionConfig`.
    #[arg(value_name = "CONFIG")]
    pub config: Option<PathBuf>,
    /// What kustomize's legacy exec plugins pass after CONFIG (a config's `argsOneLiner` or
    /// `argsFromFile`): accepted and ignored.
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        hide = true
    )]
    pub ignored: Vec<std::ffi::OsString>,
}

/// `kvrender migrate`.
#[derive(Debug, Subcommand)]
pub enum MigrateCommand {
    /// Turn VirtualMachineInstancePresets into preferences (and instancetypes).
    ///
    /// Prints the new objects, and on stderr the advice for each VM the presets select. To
    /// migrate a kpt package's files in place, comments kept, run the KRM function with
    /// `migrate: presets` (`kpt fn eval DIR --exec "kvrender fn" -- migrate=presets`).
    Presets(MigrateArgs),
}

/// `kvrender migrate presets`.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// Files or directories, or `-` for stdin.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// Also print, after the new objects, every VirtualMachine whose advice changes it, with
    /// the advice followed: the matchers added, the fields the instancetype owns removed, the
    /// preset's parts copied into its template. A VM several presets select gets the advice of
    /// all of them when it cannot clash, and is left out otherwise (a warning says so).
    #[arg(long)]
    pub with_vms: bool,
    /// Treat every warning as an error, and then print nothing: a VM that would run
    /// differently once the advice is followed, a preset part that reaches neither object,
    /// ... For a script that applies the stream only when it can be applied as it is.
    #[arg(long)]
    pub strict: bool,
    /// Where the instancetypes and preferences the VMs already name are found, and the
    /// cluster profile: what the presets meet in those VMs today.
    #[command(flatten)]
    pub resolve: ResolveArgs,
}

/// `--version-label`: a value the API server accepts on a label.
fn label_value(text: &str) -> Result<String, String> {
    crate::validate::rules::bad_label::version_label_value(text)
        .map(|()| text.to_string())
        .map_err(|why| format!("not a valid label value: it {why}"))
}

/// `--version-label-key`: a key the API server accepts on a label.
fn label_key(text: &str) -> Result<String, String> {
    crate::validate::rules::bad_label::label_key(text)
        .map(|()| text.to_string())
        .map_err(|why| format!("not a valid label key: it {why}"))
}
