//! KubeVirt's semantics, reproduced offline. One module per upstream concept; each opens with
//! the upstream file it mirrors.

pub mod conflict;
