"""Ruleset presets and small reference data, installed as cinqmille.data."""
