//! Placeholder: position encoding and the policy/value network (issue 7).
