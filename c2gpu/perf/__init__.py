"""Performance prediction wired to the IR and the mapping (issue 4): static kernel analyses,
the KernelProfile both models read, nest-level predictions, block-size selection and reports."""
