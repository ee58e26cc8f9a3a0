"""jinja2 templates, installed as the package `c2gpu.templates` (loaded with PackageLoader("c2gpu.templates", "."))."""
