"""Helpers the tests share: plain functions and constants, no fixtures (those live in each folder's conftest)."""
