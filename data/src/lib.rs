//! Placeholder: the Arrow dataset schema, writer and reader (issue 3).
