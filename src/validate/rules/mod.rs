//! One file per rule. Rules found by KubeVirt's admission checks share one pass
//! ([`admission`]); their files hold the documentation and the [`super::Rule`].

pub mod admission;
pub mod api_version;
pub mod bad_label;
pub mod bad_matcher;
pub mod bad_name;
pub mod deprecated;
pub mod duplicate;
pub mod empty_value;
pub mod infer_from_volume;
pub mod instancetype_conflict;
pub mod invalid_spec;
pub mod not_an_object;
pub mod pool;
pub mod reference_not_found;
pub mod renamed_reference;
pub mod replica_set;
pub mod requirements;
pub mod size_labels;
pub mod spread;
mod templated;
pub mod unknown_field;
pub mod unmet_requirements;
pub mod unusable_instancetype;
pub mod vm_spec;
pub mod wrong_type;
pub mod yaml_boolean;
pub mod yaml_folded;
pub mod yaml_syntax;
