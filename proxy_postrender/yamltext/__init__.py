"""yamltext."""
