//! The VirtualMachineInstance a VirtualMachine produces. Being written.
