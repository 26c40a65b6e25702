"""Cluster API schema checks: JSON Schemas generated from the upstream CRDs.

``crd_schema`` turns the CRDs into the JSON Schemas kept in ``schemas/`` (test
data, with their provenance in ``schemas/SOURCE.md``); ``validate`` checks
objects against them.
"""
