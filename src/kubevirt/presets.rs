//! VirtualMachineInstancePresets (deprecated upstream). Being written.
