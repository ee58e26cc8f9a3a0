"""`python -m c2gpu.templates`: compile the CUDA templates ahead of time into c2gpu/templates/compiled/ (after
editing a template; tests/test_templates.py says when), see c2gpu/codegen/precompiled.py."""
from c2gpu.codegen.precompiled import refresh, templates

print("compiled:", ", ".join(refresh(templates())))
