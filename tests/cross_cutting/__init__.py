"""Tests across the packages: the contract through every way in and against Ajv, end to end, the
public API, the docs, the README, the examples, the test helpers and the package's shape."""
