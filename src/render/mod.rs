//! Rendering instancetype families and composed preferences. Being written.
